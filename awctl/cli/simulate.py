"""``awctl simulate``: talk to a world model interactively, replay data through it, or serve it.

* ``repl``  — type actions, see simulated observations; ``:backend`` / ``:perturb`` switch live.
* ``batch`` — teacher-forced replay of trajectories or AgentWorldBench rows → predictions JSONL.
* ``serve`` — OpenAI-compatible + environment-session HTTP server (docs/serving.md).
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import click

from awctl.errors import AwctlError


def parse_kv(pairs: tuple[str, ...] | list[str], what: str = "option") -> dict[str, Any]:
    """``key=value`` pairs → dict; values parse as JSON when they can (numbers, true/false, objects),
    otherwise stay strings."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"{what} {pair!r} must look like key=value")
        try:
            out[key] = json.loads(raw)
        except json.JSONDecodeError:
            out[key] = raw
    return out


def make_backend(name: str | None, model: str | None, options: dict[str, Any]) -> Any:
    """Build a backend by name with ``model`` (project defaults from awctl.toml when not given)."""
    from awctl.backend import build_backend
    from awctl.config import load_project_config

    defaults = load_project_config().defaults
    name = name or defaults.backend
    opts = dict(options)
    model = model or (defaults.model if name != "openai" else None)
    if model is not None:
        opts.setdefault("model", model)
    if name in ("transformers", "vllm") and "seed" not in opts:
        opts["seed"] = defaults.seed
    if name == "transformers" and "device" not in opts:
        opts["device"] = defaults.device
    try:
        return build_backend(name, **opts)
    except TypeError as exc:
        raise AwctlError(
            f"backend {name!r} does not take these options: {exc}",
            hint="see docs/serving.md for each backend's options",
        ) from None


backend_options = [
    click.option(
        "--backend", "-b", default=None, help="Backend name (default: awctl.toml defaults.backend)."
    ),
    click.option(
        "--model", "-m", default=None, help="Model: HF dir, .gguf file, 'tiny', or a served model name."
    ),
    click.option(
        "--backend-option",
        "-O",
        "backend_opts",
        multiple=True,
        metavar="KEY=VALUE",
        help="Backend option, e.g. -O base_url=http://127.0.0.1:8000/v1 -O batch_size=32.",
    ),
]


def with_backend_options(fn: Any) -> Any:
    for opt in reversed(backend_options):
        fn = opt(fn)
    return fn


@click.group()
def simulate() -> None:
    """Run a world model as an environment: repl, batch replay, or HTTP server."""


# ── repl ─────────────────────────────────────────────────────────────────────────────────────────────

REPL_HELP = """commands:
  :help                          this text
  :quit | :q                     leave (Ctrl-D too)
  :reset                         start a new episode
  :history                       show the episode so far
  :perturb NAME [k=v ...] [every=N] [match=REGEX]   inject a perturbation; ':perturb off' removes it
  :perturbations                 list the domain's perturbations
  :backend NAME [model=M] [k=v ...]                 switch backend (the old one is closed)
  :raw                           toggle showing the raw model output
  :save PATH                     write the episode as a trajectory JSONL line
anything else is an action; end a line with '\\' to continue the action on the next line"""


def _render_step(console: Any, result: Any, show_raw: bool) -> None:
    from rich.markup import escape
    from rich.panel import Panel

    info = result.info
    if info.get("reasoning"):
        console.print(Panel(escape(info["reasoning"]), title="reasoning", style="dim", expand=False))
    if show_raw:
        console.print(Panel(escape(info.get("raw", "")), title="raw output", style="dim", expand=False))
    d = info["diagnostics"]
    flags = [k for k in ("empty", "unclosed_think", "unclosed_observation", "speculative") if d.get(k)]
    if not d.get("tagged"):
        flags.append("untagged")
    pert = info.get("perturbation")
    subtitle = f"{d['observation_chars']} chars" + (f" · {', '.join(flags)}" if flags else "")
    if pert:
        subtitle += f" · perturbed: {pert['name']}"
    console.print(
        Panel(
            escape(result.observation) or "[dim](empty)[/dim]",
            title=f"observation {info['turn'] + 1}",
            expand=False,
        )
    )
    # Below the panel, not in its subtitle: a narrow panel would truncate it.
    console.print(f"[dim]{escape(subtitle)}[/dim]")
    for rep in info.get("verifiers", []):
        if not rep["ok"]:
            console.print(f"[red]✗ {escape(rep['check'])}[/red] {escape(rep['message'])}")
    if info.get("attempts", 1) > 1:
        console.print(
            f"[dim]{info['attempts']} attempts, failed checks per attempt: {info['candidates']}[/dim]"
        )
    if result.done:
        console.print("[yellow]episode finished (max turns)[/yellow]")


def _repl_command(line: str, env: Any, console: Any, state: dict[str, Any]) -> bool:
    """Handle a ``:command``; returns False to quit."""
    from rich.markup import escape

    parts = shlex.split(line[1:])
    cmd, args = (parts[0], parts[1:]) if parts else ("help", [])
    if cmd in ("q", "quit", "exit"):
        return False
    if cmd == "help":
        console.print(escape(REPL_HELP))
    elif cmd == "reset":
        obs = env.reset()
        console.print("[green]new episode[/green]" + (f"\n{escape(obs)}" if obs else ""))
    elif cmd == "history":
        for j, turn in enumerate(env.history):
            console.print(f"[bold]{j + 1}> {escape(turn.action)}[/bold]\n{escape(turn.observation)}")
    elif cmd == "perturbations":
        for p in env.sim_domain.perturbations():
            console.print(f"[bold]{p.name}[/bold] {escape(p.description)} (defaults {p.defaults})")
    elif cmd == "perturb":
        if not args or args[0] == "off":
            env.set_perturbation(None)
            console.print("perturbation off")
        else:
            params = parse_kv(args[1:], "perturbation parameter")
            every = int(params.pop("every", 1))
            match = params.pop("match", None)
            env.set_perturbation(args[0], params, every, match)
            console.print(
                f"perturbation {args[0]} every {every} matching {match or 'any action'}: "
                f"{escape(env.schedule.text)}"
            )
    elif cmd == "backend":
        if not args:
            console.print(f"backend {env.backend.name} model {env.backend.model}")
        else:
            opts = parse_kv(args[1:], "backend option")
            model = opts.pop("model", None)
            new = make_backend(args[0], model, opts)
            old, env.backend = env.backend, new
            old.close()
            console.print(f"switched to {new.name} ({new.model})")
    elif cmd == "raw":
        state["raw"] = not state["raw"]
        console.print(f"raw output {'on' if state['raw'] else 'off'}")
    elif cmd == "save":
        if not args:
            raise click.UsageError(":save needs a path")
        from awctl.trajectory import write_trajectories

        write_trajectories(args[0], [env.to_trajectory()])
        console.print(f"saved {len(env.history)} turns to {escape(args[0])}")
    else:
        console.print(f"[red]unknown command :{escape(cmd)}[/red] (:help lists them)")
    return True


@simulate.command()
@click.option("--domain", "-d", required=True, help="Domain to simulate (see `awctl domains`).")
@with_backend_options
@click.option("--task-id", default=None, help="Start from this task of the domain.")
@click.option("--instruction", default=None, help="Ad-hoc task instruction for the system prompt.")
@click.option("--initial-state", default="", help="Initial-state section text.")
@click.option("--variant", type=int, default=0, show_default=True, help="System-prompt wording variant.")
@click.option("--max-tokens", type=int, default=512, show_default=True)
@click.option("--temperature", type=float, default=0.0, show_default=True)
@click.option(
    "--resample", type=int, default=0, show_default=True, help="Resample up to K times on verifier failure."
)
@click.option("--perturbation", default=None, help="Perturbation name to inject.")
@click.option("--param", "-P", "params", multiple=True, metavar="KEY=VALUE", help="Perturbation parameter.")
@click.option("--every", type=int, default=1, show_default=True, help="Perturb every N-th counted action.")
@click.option("--match", default=None, help="Only actions matching this regex count for the perturbation.")
def repl(
    domain: str,
    backend: str | None,
    model: str | None,
    backend_opts: tuple[str, ...],
    task_id: str | None,
    instruction: str | None,
    initial_state: str,
    variant: int,
    max_tokens: int,
    temperature: float,
    resample: int,
    perturbation: str | None,
    params: tuple[str, ...],
    every: int,
    match: str | None,
) -> None:
    """Type actions and see the simulated observations (:help for commands)."""
    from rich.console import Console

    from awctl.plugins import get_domain
    from awctl.sim.env import SimEnv
    from awctl.sim.server import SessionManager

    console = Console(highlight=False)
    dom = get_domain(domain)
    task = (
        SessionManager._task(dom, {"task_id": task_id, "instruction": instruction})
        if (task_id or instruction is not None)
        else None
    )
    be = make_backend(backend, model, parse_kv(backend_opts, "backend option"))
    env = SimEnv(
        dom,
        be,
        task=task,
        initial_state=initial_state,
        variant=variant,
        max_tokens=max_tokens,
        temperature=temperature,
        resample=resample,
        perturbation=perturbation,
        perturbation_params=parse_kv(params, "perturbation parameter"),
        perturb_every=every,
        perturb_match=match,
    )
    first = env.reset()
    console.print(f"[bold]{dom.name}[/bold] simulated by {be.name} ({be.model}); :help for commands")
    if first:
        console.print(first)
    state = {"raw": False}
    buffer: list[str] = []
    try:
        while True:
            prompt = "... " if buffer else f"{len(env.history) + 1}> "
            if sys.stdin.isatty():
                try:
                    line = console.input(prompt)
                except EOFError:
                    break
            else:
                line = sys.stdin.readline()
                if not line:
                    break
                line = line.rstrip("\n")
            if line.endswith("\\"):
                buffer.append(line[:-1])
                continue
            action = "\n".join([*buffer, line])
            buffer = []
            if not action.strip():
                continue
            if action.startswith(":"):
                try:
                    if not _repl_command(action, env, console, state):
                        break
                except (AwctlError, click.ClickException, ValueError) as exc:
                    console.print(f"[red]error:[/red] {exc}")
                continue
            _render_step(console, env.step(action), state["raw"])
    finally:
        env.backend.close()


# ── batch ────────────────────────────────────────────────────────────────────────────────────────────


def _detect_format(path: Path) -> str:
    from awctl.trajectory import iter_jsonl

    for _, obj in iter_jsonl(path):
        if "turns" in obj:
            return "trajectories"
        if any(k in obj for k in ("current_prompt", "system_str", "response")):
            return "awb"
        raise AwctlError(
            f"{path}:1: neither a trajectory (no 'turns') nor an AgentWorldBench row",
            hint="pass --format trajectories or --format awb",
        )
    raise AwctlError(f"{path} is empty")


def iter_records(path: Path, fmt: str) -> Any:
    """Chat records (:func:`awctl.formats.view.chat_records`) for every evaluated turn of ``path``."""
    from awctl.formats import agentworldbench as awb
    from awctl.formats.view import chat_records
    from awctl.trajectory import read_trajectories

    domains = awb.registry_domains()
    trajs = read_trajectories(path) if fmt == "trajectories" else awb.read_rows(path, domains)
    for traj in trajs:
        yield from chat_records(traj, domains)


@simulate.command()
@click.argument("input_path", metavar="INPUT", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("-o", "--output", type=click.Path(path_type=Path), required=True, help="Predictions JSONL.")
@with_backend_options
@click.option(
    "--format", "fmt", type=click.Choice(["auto", "trajectories", "awb"]), default="auto", show_default=True
)
@click.option("--batch-size", type=int, default=32, show_default=True, help="Requests per backend call.")
@click.option("--limit", type=int, default=None, help="At most this many turns.")
@click.option("--max-tokens", type=int, default=1024, show_default=True)
@click.option("--temperature", type=float, default=0.0, show_default=True)
@click.option("--seed", type=int, default=None)
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def batch(
    input_path: Path,
    output: Path,
    backend: str | None,
    model: str | None,
    backend_opts: tuple[str, ...],
    fmt: str,
    batch_size: int,
    limit: int | None,
    max_tokens: int,
    temperature: float,
    seed: int | None,
    as_json: bool,
) -> None:
    """Teacher-forced replay: predict every turn of INPUT from its true history.

    Each output line: id, trajectory_id, domain, turn, prediction (parsed observation), raw_output,
    reasoning, reference (the recorded observation as the model sees it), diagnostics, finish_reason.
    """
    import time

    from awctl.backend import ChatRequest
    from awctl.sim.parse import parse_output
    from awctl.trajectory import open_text

    if batch_size < 1:
        raise click.BadParameter("must be at least 1", param_hint="--batch-size")
    fmt = _detect_format(input_path) if fmt == "auto" else fmt
    be = make_backend(backend, model, parse_kv(backend_opts, "backend option"))
    start, written, empty = time.time(), 0, 0
    try:
        with open_text(output, "w") as out:
            pending: list[dict[str, Any]] = []

            def flush() -> None:
                nonlocal written, empty
                reqs = [
                    ChatRequest(
                        messages=r["messages"], max_tokens=max_tokens, temperature=temperature, seed=seed
                    )
                    for r in pending
                ]
                for rec, comps in zip(pending, be.generate(reqs), strict=True):
                    comp = comps[0]
                    parsed = parse_output(comp.text, comp.reasoning)
                    empty += int(parsed.diagnostics["empty"])
                    out.write(
                        json.dumps(
                            {
                                "id": rec["id"],
                                "trajectory_id": rec["trajectory_id"],
                                "domain": rec["domain"],
                                "turn": rec["turn"],
                                "prediction": parsed.observation,
                                "raw_output": comp.text,
                                "reasoning": parsed.reasoning,
                                "reference": rec["reference"],
                                "diagnostics": parsed.diagnostics,
                                "finish_reason": comp.finish_reason,
                            },
                            ensure_ascii=False,
                        )
                        + "\n"
                    )
                    written += 1
                pending.clear()

            for rec in iter_records(input_path, fmt):
                if limit is not None and written + len(pending) >= limit:
                    break
                pending.append(rec)
                if len(pending) >= batch_size:
                    flush()
            if pending:
                flush()
    finally:
        be.close()
    summary = {
        "input": str(input_path),
        "format": fmt,
        "output": str(output),
        "predictions": written,
        "empty_extractions": empty,
        "seconds": round(time.time() - start, 2),
        "backend": be.name,
        "model": be.model,
    }
    if as_json:
        click.echo(json.dumps(summary, indent=2))
    else:
        click.echo(
            f"wrote {written} predictions to {output} in {summary['seconds']}s "
            f"({empty} with an empty extraction)"
        )


# ── serve ────────────────────────────────────────────────────────────────────────────────────────────


@simulate.command()
@with_backend_options
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", type=int, default=8000, show_default=True)
@click.option(
    "--served-model-name", default=None, help="Model id clients pass (default: the model argument)."
)
@click.option("--max-batch", type=int, default=64, show_default=True, help="Most requests per backend call.")
@click.option(
    "--batch-window-ms",
    type=float,
    default=5.0,
    show_default=True,
    help="How long to gather concurrent requests before a backend call.",
)
@click.option("--default-max-tokens", type=int, default=1024, show_default=True)
@click.option(
    "--session-timeout",
    type=float,
    default=600.0,
    show_default=True,
    help="Idle seconds before a session closes.",
)
@click.option(
    "--step-timeout", type=float, default=300.0, show_default=True, help="Seconds one step may take."
)
@click.option("--max-sessions", type=int, default=4096, show_default=True)
@click.option(
    "--reasoning-parser",
    type=click.Choice(["none", "think"]),
    default="none",
    show_default=True,
    help="'think': move <think> blocks from content into reasoning_content.",
)
@click.option(
    "--session-option",
    "-S",
    "session_opts",
    multiple=True,
    metavar="KEY=VALUE",
    help="Default SimEnv option for every session, e.g. -S max_tokens=256 -S max_history_turns=8.",
)
@click.option("--log-level", default="warning", show_default=True)
def serve(
    backend: str | None,
    model: str | None,
    backend_opts: tuple[str, ...],
    host: str,
    port: int,
    served_model_name: str | None,
    max_batch: int,
    batch_window_ms: float,
    default_max_tokens: int,
    session_timeout: float,
    step_timeout: float,
    max_sessions: int,
    reasoning_parser: str,
    session_opts: tuple[str, ...],
    log_level: str,
) -> None:
    """Serve a backend over HTTP: OpenAI-compatible chat completions and environment sessions."""
    from awctl.sim.server import SESSION_OPTIONS, ServerSettings
    from awctl.sim.server import serve as run_server

    defaults = parse_kv(session_opts, "session option")
    unknown = sorted(set(defaults) - set(SESSION_OPTIONS))
    if unknown:
        raise click.BadParameter(
            f"unknown session option(s) {unknown}; allowed: {sorted(SESSION_OPTIONS)}",
            param_hint="--session-option",
        )
    be = make_backend(backend, model, parse_kv(backend_opts, "backend option"))
    settings = ServerSettings(
        model_name=served_model_name or str(be.model),
        max_batch=max_batch,
        window_ms=batch_window_ms,
        default_max_tokens=default_max_tokens,
        session_timeout=session_timeout,
        step_timeout=step_timeout,
        max_sessions=max_sessions,
        split_reasoning=reasoning_parser == "think",
        session_defaults=defaults,
    )

    def ready(url: str) -> None:
        click.echo(f"awctl simulate serve: {settings.model_name} ({be.name}) on {url}", err=True)

    try:
        run_server(be, settings, host=host, port=port, log_level=log_level, on_ready=ready)
    finally:
        be.close()
