"""``awctl eval``: AgentWorldBench-compatible inference, judging and scoring.

``infer`` writes prediction rows (AWB rows + ``gen``), ``judge`` writes judged rows with the official
keys, ``score`` aggregates them with the official rules; every file is readable by the official
``eval.py judge``/``score`` and the other way round. ``run`` chains the three into one folder.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click


def _parse_opts(pairs: tuple[str, ...], flag: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"{pair!r} is not KEY=VALUE", param_hint=flag)
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value  # plain strings need no quotes
    return out


def _backend_options(
    model: str | None,
    base_url: str | None,
    api_key: str | None,
    opts: tuple[str, ...],
    flag: str = "--backend-opt",
) -> dict[str, Any]:
    options = _parse_opts(opts, flag)
    if model is not None:
        options["model"] = model
    if base_url is not None:
        options["base_url"] = base_url
    if api_key is not None:
        options["api_key"] = api_key
    return options


def backend_flags(prefix: str, what: str):  # type: ignore[no-untyped-def]
    """Click options ``--{prefix}backend``, ``--{prefix}model``, ``--{prefix}base-url``, ... for one backend."""
    p = f"{prefix}-" if prefix else ""
    u = f"{prefix}_" if prefix else ""

    def deco(fn):  # type: ignore[no-untyped-def]
        for opt in reversed(
            [
                click.option(
                    f"--{p}backend",
                    # `--sim` is the short name the audit's users know from the docs.
                    *([f"--{prefix}"] if prefix == "sim" else []),
                    f"{u}backend",
                    default="openai",
                    show_default=True,
                    help=f"{what} backend (transformers | vllm | openai | a plugin's).",
                ),
                click.option(
                    f"--{p}model",
                    f"{u}model",
                    default=None,
                    help=f"{what} model: HF dir / GGUF / 'tiny', or the served model name.",
                ),
                click.option(
                    f"--{p}base-url",
                    f"{u}base_url",
                    default=None,
                    help=f"{what} OpenAI-compatible base URL (openai backend).",
                ),
                click.option(
                    f"--{p}api-key", f"{u}api_key", default=None, help=f"{what} API key (openai backend)."
                ),
                click.option(
                    f"--{p}backend-opt",
                    f"{u}backend_opt",
                    multiple=True,
                    metavar="KEY=VALUE",
                    help=f"Extra {what.lower()} backend option (JSON values allowed); repeatable.",
                ),
            ]
        ):
            fn = opt(fn)
        return fn

    return deco


def _build_judge(
    judge: str,
    backend: str,
    model: str | None,
    base_url: str | None,
    api_key: str | None,
    opts: tuple[str, ...],
    max_retries: int,
    max_tokens: int,
    temperature: float,
) -> Any:
    from awctl.plugins import get_registry

    registry = get_registry()
    factory = registry.judge(judge).obj
    if judge == "llm":
        return factory(
            domains=registry.domains,
            backend_name=backend,
            backend_options=_backend_options(model, base_url, api_key, opts, "--judge-backend-opt"),
            max_retries=max_retries,
            max_tokens=max_tokens,
            temperature=temperature,
        )
    return factory()


@click.group()
def eval() -> None:  # noqa: A001 - the command is called "eval"
    """AgentWorldBench-compatible evaluation: infer, judge, score, run."""


# ── infer ──
def do_infer(
    inputs: tuple[Path, ...],
    output: Path,
    backend: str,
    options: dict[str, Any],
    *,
    max_tokens: int,
    temperature: float,
    chunk_size: int,
    workers: int,
    resume: bool,
    limit: int | None,
    seed: int | None,
    quiet: bool,
) -> dict[str, Any]:
    from awctl.backend import build_backend
    from awctl.eval.infer import run_infer
    from awctl.eval.rows import iter_input_rows

    with build_backend(backend, **options) as be:
        summary = run_infer(
            iter_input_rows(inputs),
            be,
            output,
            max_tokens=max_tokens,
            temperature=temperature,
            seed=seed,
            chunk_size=chunk_size,
            workers=workers,
            resume=resume,
            limit=limit,
            on_chunk=None if quiet else lambda c: click.echo(f"  +{len(c)} rows", err=True),
        )
    return summary.to_dict()


_infer_opts = [
    click.option("--max-tokens", type=int, default=4096, show_default=True),
    click.option("--temperature", type=float, default=0.6, show_default=True),
    click.option("--seed", type=int, default=None),
    click.option("--chunk-size", type=int, default=32, show_default=True, help="Requests per backend call."),
    click.option(
        "--workers", type=int, default=1, show_default=True, help="Backend calls in flight at once."
    ),
    click.option("--limit", type=int, default=None, help="Only the first N input rows."),
    click.option(
        "--no-resume", is_flag=True, help="Start over instead of skipping rows already in the output."
    ),
]


def _with(opts):  # type: ignore[no-untyped-def]
    def deco(fn):  # type: ignore[no-untyped-def]
        for opt in reversed(opts):
            fn = opt(fn)
        return fn

    return deco


@eval.command()
@click.argument("inputs", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("-o", "--output", type=click.Path(path_type=Path), required=True, help="Predictions JSONL.")
@backend_flags("", "World-model")
@_with(_infer_opts)
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def infer(
    inputs: tuple[Path, ...],
    output: Path,
    backend: str,
    model: str | None,
    base_url: str | None,
    api_key: str | None,
    backend_opt: tuple[str, ...],
    max_tokens: int,
    temperature: float,
    seed: int | None,
    chunk_size: int,
    workers: int,
    limit: int | None,
    no_resume: bool,
    as_json: bool,
) -> None:
    """Generate predictions for AWB rows (files or a *_test.jsonl folder) or trajectory JSONL."""
    from awctl.cli.output import emit_json

    summary = do_infer(
        inputs,
        output,
        backend,
        _backend_options(model, base_url, api_key, backend_opt),
        max_tokens=max_tokens,
        temperature=temperature,
        chunk_size=chunk_size,
        workers=workers,
        resume=not no_resume,
        limit=limit,
        seed=seed,
        quiet=as_json,
    )
    if as_json:
        emit_json(summary)
    else:
        click.echo(
            f"{summary['generated']} generated, {summary['skipped']} already done, {summary['failed']} "
            f"failed in {summary['seconds']:.1f}s -> {output}"
        )


# ── judge ──
def do_judge(
    predictions: Path, output: Path, judge_obj: Any, *, batch_size: int, resume: bool
) -> dict[str, Any]:
    from awctl.eval.judging import judge_rows
    from awctl.eval.rows import RowAppender, load_done, read_rows, row_key
    from awctl.eval.score import aggregate

    if not resume and output.exists():
        output.unlink()
    kept, done = load_done(
        output,
        lambda r: "failed" in r and (r["failed"] == 0.0 or r.get("error_message") == "No model generation"),
    )
    todo = [r for r in read_rows(predictions) if row_key(r) not in done]
    with RowAppender(output) as sink:
        judged = list(judge_rows(todo, judge_obj, batch_size=batch_size, on_batch=sink.write))
    return aggregate(kept + judged)


_judge_opts = [
    click.option(
        "--judge",
        "judge_name",
        default="deterministic",
        show_default=True,
        help="Judge: deterministic (no model) | llm (needs --judge-backend/--judge-model).",
    ),
    click.option("--max-retries", type=int, default=3, show_default=True, help="LLM judge calls per row."),
    click.option("--judge-max-tokens", type=int, default=4096, show_default=True),
    click.option("--judge-temperature", type=float, default=0.6, show_default=True),
    click.option("--batch-size", type=int, default=64, show_default=True, help="Rows per judge call."),
]


@eval.command()
@click.argument("predictions", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("-o", "--output", type=click.Path(path_type=Path), required=True, help="Judged JSONL.")
@_with(_judge_opts)
@backend_flags("judge", "Judge")
@click.option("--no-resume", is_flag=True, help="Start over instead of keeping rows already judged.")
@click.option("--json", "as_json", is_flag=True, help="Print the scores as JSON.")
def judge(
    predictions: Path,
    output: Path,
    judge_name: str,
    max_retries: int,
    judge_max_tokens: int,
    judge_temperature: float,
    batch_size: int,
    judge_backend: str,
    judge_model: str | None,
    judge_base_url: str | None,
    judge_api_key: str | None,
    judge_backend_opt: tuple[str, ...],
    no_resume: bool,
    as_json: bool,
) -> None:
    """Judge prediction rows and write judged rows (official keys), then print the scores."""
    from awctl.cli.output import emit_json
    from awctl.eval.score import format_table

    j = _build_judge(
        judge_name,
        judge_backend,
        judge_model,
        judge_base_url,
        judge_api_key,
        judge_backend_opt,
        max_retries,
        judge_max_tokens,
        judge_temperature,
    )
    try:
        result = do_judge(predictions, output, j, batch_size=batch_size, resume=not no_resume)
    finally:
        j.close()
    if as_json:
        emit_json(result)
    else:
        click.echo(format_table(result))


# ── score ──
@eval.command()
@click.argument("judged", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the scores as JSON.")
def score(judged: Path, as_json: bool) -> None:
    """Aggregate judged rows with the official AgentWorldBench rules."""
    from awctl.cli.output import emit_json
    from awctl.eval.rows import read_rows
    from awctl.eval.score import aggregate, format_table

    result = aggregate(read_rows(judged))
    if as_json:
        emit_json(result)
    else:
        click.echo(format_table(result))


# ── run ──
@eval.command()
@click.argument("inputs", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option(
    "--out-dir",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="Folder for predictions.jsonl, judged.jsonl and scores.json.",
)
@backend_flags("", "World-model")
@_with(_infer_opts)
@_with(_judge_opts)
@backend_flags("judge", "Judge")
@click.option("--json", "as_json", is_flag=True, help="Print the scores as JSON.")
def run(
    inputs: tuple[Path, ...],
    out_dir: Path,
    backend: str,
    model: str | None,
    base_url: str | None,
    api_key: str | None,
    backend_opt: tuple[str, ...],
    max_tokens: int,
    temperature: float,
    seed: int | None,
    chunk_size: int,
    workers: int,
    limit: int | None,
    no_resume: bool,
    judge_name: str,
    max_retries: int,
    judge_max_tokens: int,
    judge_temperature: float,
    batch_size: int,
    judge_backend: str,
    judge_model: str | None,
    judge_base_url: str | None,
    judge_api_key: str | None,
    judge_backend_opt: tuple[str, ...],
    as_json: bool,
) -> None:
    """infer → judge → score in one folder (resumable)."""
    from awctl.cli.output import emit_json
    from awctl.eval.score import format_table

    out_dir.mkdir(parents=True, exist_ok=True)
    preds, judged = out_dir / "predictions.jsonl", out_dir / "judged.jsonl"
    do_infer(
        inputs,
        preds,
        backend,
        _backend_options(model, base_url, api_key, backend_opt),
        max_tokens=max_tokens,
        temperature=temperature,
        chunk_size=chunk_size,
        workers=workers,
        resume=not no_resume,
        limit=limit,
        seed=seed,
        quiet=as_json,
    )
    j = _build_judge(
        judge_name,
        judge_backend,
        judge_model,
        judge_base_url,
        judge_api_key,
        judge_backend_opt,
        max_retries,
        judge_max_tokens,
        judge_temperature,
    )
    try:
        result = do_judge(preds, judged, j, batch_size=batch_size, resume=not no_resume)
    finally:
        j.close()
    (out_dir / "scores.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    if as_json:
        emit_json(result)
    else:
        click.echo(format_table(result))
