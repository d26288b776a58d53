"""Run a recipe's stages in order inside a run directory, and resume one.

A run directory ``<output_root>/<recipe>-<YYYYmmdd-HHMMSS>/`` holds:

- ``config.resolved.toml`` and ``config.resolved.json``: the recipe with overrides and defaults applied
  (itself a valid recipe);
- ``log.jsonl``: one structlog JSON event per line (the same events go readably to stderr);
- ``metrics.jsonl``: what stages record with ``ctx.metric``;
- ``stages/<name>/``: each stage's working folder and its ``manifest.json`` (kind, options, inputs and
  outputs with sha256 hashes, start/end, duration, status ``running|done|failed|interrupted``, error);
- ``report.md`` and ``plots/``: rebuilt at the end of every run, whatever its outcome.

Resume (:func:`run_recipe` with ``resume=``) reuses a stage when its manifest says done, its kind,
options and input hashes are unchanged, its outputs still exist with the recorded hashes, and no stage
it references was rerun; otherwise it reruns the stage (and so every later stage that references it).
A rerun stage keeps its folder (so it may continue from its own checkpoints) and must rewrite its outputs.
Resume cannot see a code change: ``rerun=`` (``--rerun STAGE``) names stages to run afresh, their folders
emptied first.

Manifests and reports are written through temp file + rename, so Ctrl-C at any moment leaves whole files;
the interrupted stage's manifest says ``interrupted`` and the run exits 130.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import signal
import sys
import threading
import time
import traceback
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any

from awctl.errors import AwctlError
from awctl.recipe import ResolvedRecipe, StageSpec, references_in
from awctl.report.markdown import build_run_report, write_atomic
from awctl.runlog import make_run_logger
from awctl.stages import StageContext, StageResult

EXIT_OK, EXIT_FAILED, EXIT_INTERRUPTED = 0, 1, 130
_CHUNK = 1 << 20


class RunError(AwctlError):
    """A run could not start or resume (bad run directory, unreadable manifest...)."""


# ── hashing ──────────────────────────────────────────────────────────────────────────────────────────


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def hash_path(path: Path) -> str | None:
    """sha256 of a file's bytes; for a folder, sha256 over its sorted relative file paths and their
    contents' hashes (so renaming, adding or changing any file changes it). None when it does not exist."""
    if path.is_file():
        return sha256_file(path)
    if not path.is_dir():
        return None
    digest = hashlib.sha256()
    for file in sorted(p for p in path.rglob("*") if p.is_file()):
        rel = file.relative_to(path).as_posix()
        digest.update(f"{rel}\0{sha256_file(file)}\n".encode())
    return digest.hexdigest()


# ── manifests ────────────────────────────────────────────────────────────────────────────────────────


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def _rel(path: Path, run_dir: Path) -> str:
    """Paths inside the run directory are stored relative to it, so a run dir can be moved and resumed."""
    try:
        return path.resolve().relative_to(run_dir.resolve()).as_posix()
    except ValueError:
        return str(path.resolve())


def _abs(text: str, run_dir: Path) -> Path:
    p = Path(text)
    return p if p.is_absolute() else run_dir / p


def write_json_atomic(path: Path, data: Any) -> None:
    write_atomic(path, json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")


def read_manifest(stage_dir: Path) -> dict[str, Any] | None:
    try:
        return json.loads((stage_dir / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None


@dataclass
class RunOutcome:
    """How a run ended. ``stages`` maps each stage name to done | reused | failed | interrupted | not run."""

    run_dir: Path
    status: str  # done | failed | interrupted
    stages: dict[str, str] = field(default_factory=dict)
    error: str | None = None
    hint: str | None = None
    report: Path | None = None

    @property
    def exit_code(self) -> int:
        return {"done": EXIT_OK, "interrupted": EXIT_INTERRUPTED}.get(self.status, EXIT_FAILED)


def new_run_dir(output_root: Path, recipe_name: str) -> Path:
    """Create ``<output_root>/<recipe>-<YYYYmmdd-HHMMSS>`` (``-2``, ``-3``... when that second is taken)."""
    output_root.mkdir(parents=True, exist_ok=True)
    base = f"{recipe_name}-{datetime.now():%Y%m%d-%H%M%S}"
    for n in range(1, 1000):
        candidate = output_root / (base if n == 1 else f"{base}-{n}")
        try:
            candidate.mkdir()
            return candidate
        except FileExistsError:
            continue
    raise RunError(f"cannot create a run directory under {output_root}", hint="clean up old run directories")


@contextmanager
def _sigint_deferred() -> Iterator[None]:
    """Ignore Ctrl-C while the run's final files are written (a second Ctrl-C must not cut them)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


# ── the runner ───────────────────────────────────────────────────────────────────────────────────────


class Runner:
    """Runs one resolved recipe in one run directory. Use :func:`run_recipe`."""

    def __init__(
        self, recipe: ResolvedRecipe, run_dir: Path, console: IO[str] | None, resuming: bool,
        force: frozenset[str] = frozenset(),
    ) -> None:
        self.recipe = recipe
        self.force = force
        self.registry = recipe.registry
        self.run_dir = run_dir
        self.resuming = resuming
        self.metrics_path = run_dir / "metrics.jsonl"
        self.config = recipe.to_dict()
        (run_dir / "stages").mkdir(parents=True, exist_ok=True)
        self.log, self._sink = make_run_logger(run_dir / "log.jsonl", console, run=run_dir.name)
        self.artifacts: dict[str, dict[str, Path]] = {}
        self.rerun: set[str] = set()
        self.outcome = RunOutcome(run_dir, "done", {s.name: "not run" for s in recipe.stages})

    def _inputs(self, spec: StageSpec, stage: Any) -> list[dict[str, Any]]:
        """Every input of a stage with its content hash: the stage's ``input_refs`` plus any
        ``@stage.output`` anywhere in its options (so a changed upstream output always counts)."""
        refs = list(dict.fromkeys([*stage.input_refs(), *references_in(spec.raw)]))
        inputs = []
        for ref in refs:
            if ref.startswith("@"):
                target, _, key = ref[1:].partition(".")
                path = self.artifacts.get(target, {}).get(key)
                if path is None:
                    known = {s: sorted(o) for s, o in self.artifacts.items()}
                    raise AwctlError(
                        f"stage {spec.name!r}: reference {ref!r} names no output of an earlier stage",
                        hint=f"earlier outputs: {known}",
                    )
            else:
                path = self.recipe.project.resolve(ref)
            inputs.append(
                {
                    "ref": ref,
                    "path": _rel(path, self.run_dir) if path.exists() else str(path),
                    "sha256": hash_path(path),
                }
            )
        return inputs

    def _reusable(
        self, spec: StageSpec, options: dict[str, Any], inputs: list[dict[str, Any]]
    ) -> dict | None:
        """The old manifest when the stage may be skipped on resume, else None (and why, in the log)."""
        old = read_manifest(self.run_dir / "stages" / spec.name)
        why = None
        if spec.name in self.force:
            why = "--rerun"
        elif not old:
            why = "no manifest"
        elif old.get("status") != "done":
            why = f"last status {old.get('status')}"
        elif old.get("kind") != spec.kind or old.get("options") != options:
            why = "kind or options changed"
        elif [(i["ref"], i["sha256"]) for i in old.get("inputs", [])] != [
            (i["ref"], i["sha256"]) for i in inputs
        ]:
            why = "inputs changed"
        elif rerun := sorted(set(spec.references()) & self.rerun):
            why = f"depends on rerun stage(s) {', '.join(rerun)}"
        else:
            for name, out in (old.get("outputs") or {}).items():
                if hash_path(_abs(out["path"], self.run_dir)) != out.get("sha256"):
                    why = f"output {name!r} is missing or changed"
                    break
        if why:
            self.log.info("stage will run", stage=spec.name, reason=why)
            return None
        return old

    def _drop_metrics(self, stage: str) -> None:
        # A rerun stage's old metric records would mix with the new ones in plots; remove them.
        if not self.metrics_path.is_file():
            return
        kept = []
        with open(self.metrics_path, encoding="utf-8") as handle:
            for line in handle:
                try:
                    if json.loads(line).get("stage") == stage:
                        continue
                except (json.JSONDecodeError, AttributeError):
                    pass
                kept.append(line)
        write_atomic(self.metrics_path, "".join(kept))

    def _run_stage(self, spec: StageSpec) -> bool:
        """Run (or reuse) one stage. Returns False when the run must stop (failure)."""
        stage_dir = self.run_dir / "stages" / spec.name
        stage_dir.mkdir(parents=True, exist_ok=True)
        log = self.log.bind(stage=spec.name, kind=spec.kind)
        options = spec.options_dict()
        stage = spec.make_stage()
        manifest: dict[str, Any] = {
            "name": spec.name,
            "kind": spec.kind,
            "options": options,
            "inputs": [],
            "outputs": {},
            "started_at": _now(),
            "ended_at": None,
            "duration_s": None,
            "status": "running",
            "error": None,
            "summary": {},
            "report": "",
            "run": self.run_dir.name,
        }
        t0 = time.monotonic()
        try:
            manifest["inputs"] = self._inputs(spec, stage)
            if self.resuming:
                old = self._reusable(spec, options, manifest["inputs"])
                if old is not None:
                    self.artifacts[spec.name] = {
                        k: _abs(v["path"], self.run_dir) for k, v in old["outputs"].items()
                    }
                    self.outcome.stages[spec.name] = "reused"
                    log.info("stage reused", reason="done with unchanged options, inputs and outputs")
                    return True
            if spec.name in self.force:
                # A forced rerun starts afresh: the folder's checkpoints came from the code being replaced.
                shutil.rmtree(stage_dir)
                stage_dir.mkdir(parents=True)
            self.rerun.add(spec.name)
            self._drop_metrics(spec.name)
            write_json_atomic(stage_dir / "manifest.json", manifest)
            # From here a Ctrl-C marks this manifest interrupted (before, a reusable old one is left alone).
            self._current = (manifest, stage_dir, t0)
            log.info("stage started")
            ctx = StageContext(
                name=spec.name,
                run_dir=self.run_dir,
                stage_dir=stage_dir,
                project=self.recipe.project,
                recipe=self.config,
                log=log,
                registry=self.registry,
                artifacts=dict(self.artifacts),
                seed=self.recipe.seed,
                _metrics_path=self.metrics_path,
            )
            result = stage.run(ctx)
            if not isinstance(result, StageResult):
                raise AwctlError(
                    f"stage kind {spec.kind!r} returned {type(result).__name__}, not a StageResult",
                    hint="return awctl.stages.StageResult(outputs=..., summary=..., report=...)",
                )
            outputs = {}
            for key, path in result.outputs.items():
                path = Path(path)
                digest = hash_path(path)
                if digest is None:
                    raise AwctlError(
                        f"stage {spec.name!r} reported output {key!r} at {path}, which does not exist",
                        hint="a stage must create every output it returns",
                    )
                outputs[key] = {
                    "path": _rel(path, self.run_dir),
                    "type": "dir" if path.is_dir() else "file",
                    "sha256": digest,
                }
            manifest.update(outputs=outputs, summary=result.summary, report=result.report, status="done")
            self.artifacts[spec.name] = {k: Path(v) for k, v in result.outputs.items()}
            self._finish(manifest, stage_dir, t0)
            self.outcome.stages[spec.name] = "done"
            log.info("stage done", duration_s=manifest["duration_s"], **_loggable(result.summary))
            return True
        except KeyboardInterrupt:
            raise  # handled by run(): the manifest is marked interrupted there
        except (Exception, SystemExit) as exc:  # a stage calling sys.exit is a failure, not a run exit
            message = exc.message if isinstance(exc, AwctlError) else f"{type(exc).__name__}: {exc}"
            hint = exc.hint if isinstance(exc, AwctlError) else None
            manifest.update(status="failed", error=message)
            self._finish(manifest, stage_dir, t0)
            self.outcome.stages[spec.name] = "failed"
            log.error("stage failed", error=message, traceback=traceback.format_exc(limit=20))
            self.outcome.status = "failed"
            self.outcome.error = f"stage {spec.name!r} ({spec.kind}) failed: {message}"
            self.outcome.hint = (hint + "; " if hint else "") + (
                f"details in {stage_dir / 'manifest.json'} and {self.run_dir / 'log.jsonl'}; "
                f"fix it and rerun with --resume {self.run_dir}"
            )
            return False

    def _finish(self, manifest: dict[str, Any], stage_dir: Path, t0: float) -> None:
        manifest["ended_at"] = _now()
        manifest["duration_s"] = round(time.monotonic() - t0, 3)
        write_json_atomic(stage_dir / "manifest.json", manifest)
        self._current = None

    def run(self) -> RunOutcome:
        self._current: tuple[dict[str, Any], Path, float] | None = None
        try:
            self.log.info(
                "run started" if not self.resuming else "run resumed",
                recipe=self.recipe.name,
                run_dir=str(self.run_dir),
                stages=[s.name for s in self.recipe.stages],
                overrides=self.recipe.overrides,
            )
            for spec in self.recipe.stages:
                if not self._run_stage(spec):
                    break
        except KeyboardInterrupt:
            with _sigint_deferred():
                self.outcome.status = "interrupted"
                self.outcome.error = "interrupted (Ctrl-C)"
                self.outcome.hint = f"continue with: awctl run --resume {self.run_dir}"
                if self._current is not None:
                    manifest, stage_dir, t0 = self._current
                    manifest.update(status="interrupted", error="interrupted by SIGINT")
                    self._finish(manifest, stage_dir, t0)
                    self.outcome.stages[manifest["name"]] = "interrupted"
                self.log.warning("run interrupted")
        finally:
            with _sigint_deferred():
                self.outcome.report = build_run_report(
                    self.run_dir, self.outcome.status, self.outcome.error, self.outcome.stages
                )
                self.log.info(
                    "run finished",
                    status=self.outcome.status,
                    report=str(self.outcome.report),
                    stages=self.outcome.stages,
                )
                self._sink.close()
        return self.outcome


def _loggable(summary: dict[str, Any]) -> dict[str, Any]:
    # Summary keys must not collide with the event's own keys.
    return {
        f"summary_{k}" if k in ("event", "level", "timestamp", "stage", "run") else k: v
        for k, v in summary.items()
    }


def run_recipe(
    recipe: ResolvedRecipe,
    *,
    resume: Path | None = None,
    output_root: Path | None = None,
    console: IO[str] | None = sys.stderr,
    rerun: Iterable[str] = (),
) -> RunOutcome:
    """Run ``recipe`` in a new run directory (or in ``resume``, reusing unchanged done stages).

    ``rerun``: stages to run afresh on resume (their folders emptied) although nothing they record changed,
    e.g. after a code change; every later stage that references one reruns too.

    ``output_root`` defaults to the recipe's ``output_root``, then awctl.toml's, relative to the project
    root. Never raises for a stage's failure or a Ctrl-C: the outcome says what happened and
    ``outcome.exit_code`` is 0, 1 or 130. Raises RunError when ``resume`` is not a run directory.
    """
    force = frozenset(rerun)
    if unknown := sorted(force - {s.name for s in recipe.stages}):
        raise RunError(f"--rerun {', '.join(unknown)}: no such stage in recipe {recipe.name!r}",
                       hint=f"its stages: {', '.join(s.name for s in recipe.stages)}")
    if force and resume is None:
        raise RunError("--rerun needs --resume RUN_DIR", hint="a new run directory runs every stage anyway")
    if resume is not None:
        run_dir = Path(resume).resolve()
        if not (run_dir / "config.resolved.json").is_file():
            raise RunError(
                f"{run_dir} is not a run directory (no config.resolved.json)",
                hint="pass a folder that `awctl run` created, e.g. runs/<recipe>-<timestamp>",
            )
    else:
        root = output_root or recipe.project.resolve(recipe.meta.output_root or recipe.project.output_root)
        run_dir = new_run_dir(Path(root), recipe.name)
    write_atomic(run_dir / "config.resolved.toml", recipe.to_toml())
    write_json_atomic(run_dir / "config.resolved.json", recipe.to_dict())
    (run_dir / "metrics.jsonl").touch()
    return Runner(recipe, run_dir, console, resuming=resume is not None, force=force).run()
