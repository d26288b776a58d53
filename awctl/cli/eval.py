"""``awctl eval``: AgentWorldBench-compatible inference, judging and scoring.

``infer`` writes prediction rows (AWB rows + ``gen``), ``judge`` writes judged rows with the official
keys, ``score`` aggregates them with the official rules plus the exact-match rate; every file is readable
by the official ``eval.py judge``/``score`` and the other way round. ``run`` is the ``eval`` stage kind run
in one folder (:func:`awctl.stages.eval.run_eval`): infer → judge → score, with the copy baseline.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from awctl.cli.options import backend_flags, backend_spec, given, pop_backend
from awctl.keyvalue import parse_assignments


@click.group()
def eval() -> None:  # noqa: A001 - the command is called "eval"
    """AgentWorldBench-compatible evaluation: infer, judge, score, run."""


def _with(opts: list[Any]) -> Any:
    def deco(fn: Any) -> Any:
        for opt in reversed(opts):
            fn = opt(fn)
        return fn

    return deco


_infer_opts = [
    click.option("--max-tokens", type=int, default=4096, show_default=True),
    click.option("--temperature", type=float, default=0.6, show_default=True),
    click.option("--seed", type=int, default=None),
    click.option("--chunk-size", type=int, default=32, show_default=True, help="Requests per backend call."),
    click.option("--workers", type=int, default=1, show_default=True, help="Backend calls in flight at once."),
    click.option("--limit", type=int, default=None, help="Only the first N input rows."),
    click.option("--no-resume", is_flag=True, help="Start over instead of reusing rows already in the output."),
]

_judge_opts = [
    click.option("--judge", "judge_name", default="deterministic", show_default=True,
                 help="A registered judge: deterministic (no model) | llm (give --judge-backend/--judge-model) "
                      "| a plugin's."),
    click.option("--judge-opt", "judge_opt", multiple=True, metavar="KEY=VALUE",
                 help="Judge option (TOML value), e.g. --judge-opt max_tokens=4096; repeatable."),
    click.option("--batch-size", type=int, default=64, show_default=True, help="Rows per judge call."),
]


def _judge_options(judge_opt: tuple[str, ...], flags: dict[str, Any]) -> dict[str, Any]:
    """``--judge-opt`` pairs, plus ``backend_name``/``backend_options`` when judge backend flags are given
    (the options of a judge that calls a model)."""
    options = parse_assignments(judge_opt, "--judge-opt")
    if given(flags):
        name, backend_options = backend_spec(flags, flag_prefix="judge")
        options.setdefault("backend_name", name)
        options.setdefault("backend_options", backend_options)
    return options


def _emit(result: dict[str, Any], as_json: bool) -> None:
    from awctl.cli.output import emit_json
    from awctl.eval.pipeline import format_summary
    from awctl.eval.score import format_table

    if as_json:
        emit_json(result)
    else:
        click.echo(format_table(result))
        click.echo(format_summary(result))


# ── infer ──
@eval.command()
@click.argument("inputs", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("-o", "--output", type=click.Path(path_type=Path), required=True, help="Predictions JSONL.")
@backend_flags()
@_with(_infer_opts)
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def infer(inputs: tuple[Path, ...], output: Path, max_tokens: int, temperature: float, seed: int | None,
          chunk_size: int, workers: int, limit: int | None, no_resume: bool, as_json: bool, **flags: Any) -> None:
    """Generate predictions for AWB rows (files or a *_test.jsonl folder) or trajectory JSONL."""
    from awctl.cli.output import emit_json
    from awctl.eval.infer import run_infer
    from awctl.eval.pipeline import backend_identity, fingerprint
    from awctl.eval.rows import iter_input_rows
    from awctl.plugins import get_registry

    registry = get_registry()
    name, options = backend_spec(pop_backend(flags))
    with registry.build_backend(name, **options) as backend:
        summary = run_infer(
            iter_input_rows(inputs, registry.domains), backend, output, max_tokens=max_tokens,
            temperature=temperature, seed=seed, chunk_size=chunk_size, workers=workers, resume=not no_resume,
            limit=limit, provenance=fingerprint(backend_identity(name, options), max_tokens, temperature, seed),
            on_chunk=None if as_json else lambda c: click.echo(f"  +{len(c)} rows", err=True),
        ).to_dict()
    if as_json:
        emit_json(summary)
    else:
        click.echo(f"{summary['generated']} generated, {summary['skipped']} reused from {output}, "
                   f"{summary['failed']} failed in {summary['seconds']:.1f}s -> {output}")


# ── judge ──
@eval.command()
@click.argument("predictions", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("-o", "--output", type=click.Path(path_type=Path), required=True, help="Judged JSONL.")
@_with(_judge_opts)
@backend_flags("judge", "Judge")
@click.option("--no-resume", is_flag=True, help="Start over instead of reusing rows already judged.")
@click.option("--json", "as_json", is_flag=True, help="Print the scores as JSON.")
def judge(predictions: Path, output: Path, judge_name: str, judge_opt: tuple[str, ...], batch_size: int,
          no_resume: bool, as_json: bool, **flags: Any) -> None:
    """Judge prediction rows and write judged rows (official keys), then print the scores.

    A row already in OUTPUT is reused only when the same judge, judge options and domain verifiers made
    it; the count of reused rows is printed."""
    from awctl.eval.pipeline import judge_file, judge_fingerprint, summarize
    from awctl.eval.rows import read_rows
    from awctl.plugins import get_registry

    registry = get_registry()
    options = _judge_options(judge_opt, pop_backend(flags, "judge"))
    j = registry.build_judge(judge_name, **options)
    try:
        run = judge_file(read_rows(predictions), output, j, judge_fingerprint(judge_name, options),
                         registry.domains, batch_size=batch_size, resume=not no_resume)
    finally:
        j.close()
    result = {**summarize(run.rows, registry.domains), "judged": run.judged, "reused": run.reused}
    if not as_json:
        click.echo(f"judged {run.judged} row(s); reused {run.reused} judged earlier with the same judge, "
                   "options and verifiers", err=True)
    _emit(result, as_json)


# ── score ──
@eval.command()
@click.argument("judged", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the scores as JSON.")
def score(judged: Path, as_json: bool) -> None:
    """Aggregate judged rows with the official AgentWorldBench rules, plus the exact-match rate."""
    from awctl.eval.pipeline import summarize
    from awctl.eval.rows import read_rows
    from awctl.plugins import get_registry

    _emit(summarize(read_rows(judged), get_registry().domains), as_json)


# ── run ──
@eval.command()
@click.argument("inputs", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--out-dir", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Folder for predictions.jsonl, judged.jsonl, baseline.jsonl and scores.json.")
@backend_flags()
@_with(_infer_opts)
@_with(_judge_opts)
@backend_flags("judge", "Judge")
@click.option("--no-baseline", is_flag=True, help="Do not judge the copy baseline beside the model.")
@click.option("--json", "as_json", is_flag=True, help="Print the scores as JSON.")
def run(inputs: tuple[Path, ...], out_dir: Path, max_tokens: int, temperature: float, seed: int | None,
        chunk_size: int, workers: int, limit: int | None, no_resume: bool, judge_name: str,
        judge_opt: tuple[str, ...], batch_size: int, no_baseline: bool, as_json: bool, **flags: Any) -> None:
    """infer → judge → score in one folder (resumable), the copy baseline judged on the same rows: the
    ``eval`` stage kind run outside a recipe."""
    from awctl.plugins import get_registry
    from awctl.stages.eval import EvalOptions, run_eval

    registry = get_registry()
    name, backend_options = backend_spec(pop_backend(flags))
    opts = EvalOptions(
        inputs=[str(p.resolve()) for p in inputs], backend=name, backend_options=backend_options, judge=judge_name,
        judge_options=_judge_options(judge_opt, pop_backend(flags, "judge")), max_tokens=max_tokens,
        temperature=temperature, seed=seed, chunk_size=chunk_size, workers=workers, limit=limit,
        batch_size=batch_size, baseline=not no_baseline, resume=not no_resume,
    )
    result = run_eval(registry, opts, out_dir, backend_options,
                      on_progress=None if as_json else lambda m: click.echo(f"  {m}", err=True))
    _emit(result, as_json)
