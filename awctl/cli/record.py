"""``awctl record``: run a policy on a domain's tasks in its real environment and write trajectories."""

from __future__ import annotations

from pathlib import Path

import click


@click.command()
@click.option("--domain", "-d", required=True, help="Domain to record (see `awctl domains`).")
@click.option("--suite", "--tasks", "suite", default=None, help="Task suite (default: every suite of the domain).")
@click.option("--task-id", "task_ids", multiple=True, help="Only these task ids or id patterns, e.g. 'terminal/drill/0[0-4]?' (repeatable).")
@click.option("--policy", default="scripted", show_default=True, help="scripted | backend:NAME (an agent model)")
@click.option("--model", default=None, help="Model for a backend policy (HF dir / GGUF / tiny / served name).")
@click.option("--base-url", default=None, help="OpenAI-compatible base URL for --policy backend:openai.")
@click.option("--limit", type=int, default=None, help="At most this many tasks.")
@click.option("--repeats", type=int, default=1, show_default=True, help="Episodes per task.")
@click.option("--workers", type=int, default=1, show_default=True, help="Parallel environments.")
@click.option("--env-opt", "env_opts", multiple=True, metavar="KEY=VALUE",
              help="Real-environment setting over awctl.toml [domains.<domain>] (TOML value), e.g. "
                   "prompt=debian for the terminal; repeatable.")
@click.option("-o", "--output", type=click.Path(path_type=Path), required=True, help="Output JSONL (.gz/.zst ok).")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def record(domain: str, suite: str | None, task_ids: tuple[str, ...], policy: str, model: str | None,
           base_url: str | None, limit: int | None, repeats: int, workers: int, env_opts: tuple[str, ...],
           output: Path, as_json: bool) -> None:
    """Record trajectories by running a policy in a domain's real environment."""
    from awctl.cli.output import emit_json
    from awctl.config import load_project_config
    from awctl.keyvalue import parse_assignments
    from awctl.plugins import get_registry
    from awctl.record import record as run_record
    from awctl.record import resolve_policy, select_tasks

    registry = get_registry()
    dom = registry.domain(domain)
    tasks = select_tasks(dom, suite, limit, list(task_ids) or None)
    options = {k: v for k, v in (("model", model), ("base_url", base_url)) if v}
    summary = run_record(
        dom, tasks, output, policy=resolve_policy(policy, dom, registry.build_backend, **options),
        repeats=repeats, workers=workers,
        env_settings={**load_project_config().domain_settings(domain), **parse_assignments(env_opts, "--env-opt")},
        on_episode=None if as_json else lambda t: click.echo(
            f"{'ok  ' if t.metadata['check']['ok'] else 'FAIL'} {t.id} ({len(t.turns)} turns)", err=True),
    )
    if as_json:
        emit_json(summary.to_dict())
    else:
        click.echo(
            f"recorded {summary.trajectories} trajectories ({summary.turns} turns) to {output} in "
            f"{summary.seconds:.1f}s; checker passed {summary.passed}, failed {len(summary.failed)}, "
            f"errors {len(summary.errors)}"
        )
        for line in summary.errors:
            click.secho(f"error: {line}", fg="red", err=True)
    if summary.errors:
        raise SystemExit(1)
