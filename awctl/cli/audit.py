"""``awctl audit``: per-action-family fidelity of a simulator against the real environment."""

from __future__ import annotations

from pathlib import Path

import click

from awctl.cli.eval import _backend_options, backend_flags


def load_reference_trajectories(
    domain_name: str,
    trajectories: tuple[Path, ...],
    real: bool,
    suite: str | None,
    limit: int | None,
    out_dir: Path,
) -> list:  # type: ignore[type-arg]
    """Recorded trajectories from files, plus (``real``) reference solutions executed live now."""
    from awctl.errors import InputError
    from awctl.plugins import get_domain
    from awctl.trajectory import read_trajectories

    out = [t for path in trajectories for t in read_trajectories(path) if t.domain == domain_name]
    if real:
        from awctl.config import load_project_config
        from awctl.record import record, select_tasks

        domain = get_domain(domain_name)
        tasks = select_tasks(domain, suite, limit)
        live = out_dir / "real.jsonl"
        summary = record(
            domain,
            tasks,
            live,
            policy="scripted",
            env_settings=load_project_config().domain_settings(domain_name),
        )
        if summary.errors:
            raise InputError(
                f"{domain_name}: {len(summary.errors)} reference run(s) failed: {summary.errors[0]}",
                hint="check `awctl doctor` for the domain's real environment",
            )
        out.extend(read_trajectories(live))
    if not out:
        raise InputError(
            f"no {domain_name} trajectories to audit",
            hint="pass --trajectories FILE (recorded real runs) or --real to run reference solutions",
        )
    if limit is not None and not real:
        out = out[:limit]
    return out


@click.command()
@click.option("--domain", "-d", "domain_name", required=True, help="Domain to audit.")
@click.option(
    "--trajectories",
    "-t",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Recorded real trajectories (repeatable).",
)
@click.option(
    "--real", is_flag=True, help="Run the domain's task reference solutions live in the real env first."
)
@click.option("--tasks", "suite", default=None, help="Task suite for --real (default: every suite).")
@click.option("--limit", type=int, default=None, help="At most this many tasks / trajectories.")
@backend_flags("sim", "Simulator")
@click.option("--max-tokens", type=int, default=2048, show_default=True)
@click.option("--temperature", type=float, default=0.0, show_default=True)
@click.option("--chunk-size", type=int, default=32, show_default=True, help="Requests per backend call.")
@click.option(
    "-o",
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("audit"),
    show_default=True,
    help="Folder for report.md, plots, audit.json and turns.jsonl.",
)
@click.option(
    "--fail-under",
    type=float,
    default=None,
    help="Exit 1 when the overall judge score (0-100) is below this (for CI).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the audit summary as JSON.")
def audit(
    domain_name: str,
    trajectories: tuple[Path, ...],
    real: bool,
    suite: str | None,
    limit: int | None,
    sim_backend: str,
    sim_model: str | None,
    sim_base_url: str | None,
    sim_api_key: str | None,
    sim_backend_opt: tuple[str, ...],
    max_tokens: int,
    temperature: float,
    chunk_size: int,
    out_dir: Path,
    fail_under: float | None,
    as_json: bool,
) -> None:
    """Replay real action sequences through a simulator, teacher-forced, and rank its blind spots."""
    from awctl.backend import build_backend
    from awctl.cli.output import emit_json
    from awctl.eval.audit import run_audit, write_report
    from awctl.plugins import get_domain, get_registry

    domain = get_domain(domain_name)
    out_dir.mkdir(parents=True, exist_ok=True)
    trajs = load_reference_trajectories(domain_name, trajectories, real, suite, limit, out_dir)
    options = _backend_options(sim_model, sim_base_url, sim_api_key, sim_backend_opt, "--sim-backend-opt")
    with build_backend(sim_backend, **options) as backend:
        result = run_audit(
            domain,
            trajs,
            backend,
            domains=get_registry().domains,
            max_tokens=max_tokens,
            temperature=temperature,
            chunk_size=chunk_size,
        )
    report = write_report(result, out_dir)
    summary = {**result.to_dict(), "report": str(report)}
    score = summary["overall"]["score"]
    failed = fail_under is not None and (score is None or score < fail_under)
    summary["fail_under"] = fail_under
    summary["passed"] = not failed
    if as_json:
        emit_json(summary)
    else:
        ov = summary["overall"]
        click.echo(
            f"{ov['turns']} turns; score {score if score is None else round(score, 2)}; report: {report}"
        )
        for f in summary["families"][:5]:
            click.echo(
                f"  {f['family']:<24} score {f['score']:6.2f}  exact {100 * f['exact_rate']:5.1f}%  "
                f"verifiers {100 * f['verifier_rate']:5.1f}%  ({f['turns']} turns)"
            )
    if failed:
        click.secho(f"audit score {score} is below --fail-under {fail_under}", fg="red", err=True)
        raise SystemExit(1)
