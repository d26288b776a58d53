"""``awctl agent train|eval``: the ``agent_train`` and ``agent_eval`` stage kinds run in one folder.

Options come from ``--options FILE.toml`` (a recipe's stage table), the flags, and ``key=value``
overrides (TOML values, e.g. ``bc.steps=40`` or ``optim.lr=1e-4``), in that order of precedence, lowest
first. The command only builds the stage's options; :func:`awctl.stages.standalone.run_standalone` runs it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from awctl.cli.options import backend_flags, backend_spec, given, pop_backend


@click.group()
def agent() -> None:
    """Train an agent with RL (GSPO) in real, simulated or hybrid environments, and evaluate it."""


def _common(fn: Any) -> Any:
    options = [
        click.option("--domain", "-d", required=False, help="Domain of the tasks (see `awctl domains`)."),
        click.option("--env", "env", type=click.Choice(["real", "sim", "hybrid"]), default=None,
                     help="Environment: real (default), sim (a world model) or hybrid."),
        click.option("--policy", default=None, help="Policy model: HF dir, .gguf, pkg:<package>/<file>.gguf, tiny."),
        click.option("--tasks", "tasks", default=None,
                     help="Task suite or slice, e.g. basic, basic[:16], basic[16:] (default: every suite)."),
        click.option("--task-id", "task_ids", multiple=True, help="Only these task ids (repeatable)."),
        click.option("--limit", type=int, default=None, help="At most this many tasks."),
        click.option("--max-turns", type=int, default=None, help="Actions per episode (default: the task's)."),
        click.option("--concurrency", type=int, default=None, help="Episodes running at once."),
        click.option("--step-timeout", "step_timeout_s", type=float, default=None, help="Seconds per env step."),
        click.option("--episode-timeout", "episode_timeout_s", type=float, default=None,
                     help="Seconds per episode."),
        click.option("--reward", type=click.Choice(["checker", "judge"]), default=None,
                     help="Episode reward: the task checker in the env (default) or an LLM judge."),
        click.option("--blind-spots", default=None,
                     help="hybrid: comma-separated action families, or an audit folder / audit.json."),
        click.option("--options", "options_file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
                     help="TOML file with the stage's options (a recipe stage table)."),
        click.option("--out", "out", type=click.Path(path_type=Path), required=True, help="Output folder."),
        click.option("--seed", type=int, default=0, show_default=True),
        click.option("--json", "as_json", is_flag=True, help="Print the stage summary as JSON."),
        backend_flags("sim", "Simulator"),
        backend_flags("judge", "Judge"),
        click.argument("overrides", nargs=-1),
    ]
    for opt in reversed(options):
        fn = opt(fn)
    return fn


def _options(kwargs: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """The stage options from ``--options``, the flags and the overrides."""
    import tomllib

    from awctl.errors import InputError
    from awctl.keyvalue import parse_assignment, set_path

    sim, judge = pop_backend(kwargs, "sim"), pop_backend(kwargs, "judge")
    options: dict[str, Any] = {}
    path = kwargs.pop("options_file")
    if path is not None:
        try:
            options = tomllib.loads(path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise InputError(f"{path}: invalid TOML: {exc}", hint="fix the options file") from None
        options.pop("kind", None)
        options.pop("name", None)
    flags = {k: kwargs.pop(k) for k in ("domain", "env", "limit", "max_turns", "concurrency", "step_timeout_s",
                                        "episode_timeout_s", "reward")}
    flags["model"] = kwargs.pop("policy")
    options.update({k: v for k, v in {**flags, **extra}.items() if v is not None})
    if "policy" in options:  # the recipe spelling
        options.setdefault("model", options.pop("policy"))
    tasks, ids = kwargs.pop("tasks"), kwargs.pop("task_ids")
    if ids:
        options["tasks"] = list(ids)
    elif tasks:
        options["tasks"] = tasks
    blind = kwargs.pop("blind_spots")
    if blind:
        options["blind_spots"] = blind if Path(blind).exists() else [b.strip() for b in blind.split(",") if b.strip()]
    if given(sim):
        name, backend_options = backend_spec(sim, flag_prefix="sim")
        wm = options.setdefault("world_model", {})
        wm["backend"], wm["options"] = name, {**wm.get("options", {}), **backend_options}
    if given(judge):
        name, backend_options = backend_spec(judge, flag_prefix="judge")
        spec = options.setdefault("judge", {})
        spec["backend"], spec["options"] = name, {**spec.get("options", {}), **backend_options}
    for item in kwargs.pop("overrides"):
        key, value = parse_assignment(item, "override", "key.path=value")
        set_path(options, key, value)
    if "domain" not in options:
        raise click.UsageError("give --domain (or domain = ... in --options)")
    return options


def _run(kind: str, options: dict[str, Any], out: Path, seed: int) -> Any:
    from pydantic import ValidationError

    from awctl.errors import InputError
    from awctl.plugins import get_registry
    from awctl.stages.standalone import run_standalone

    try:
        return run_standalone(get_registry(), kind, options, out.resolve(), seed=seed)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or '(options)'}: {e['msg']}" for e in exc.errors())
        raise InputError(f"{kind}: {problems}", hint="see `awctl agent train --help` and docs") from None


@agent.command()
@_common
@click.option("--steps", type=int, default=None, help="GSPO optimizer steps.")
@click.option("--group-size", type=int, default=None, help="Episodes per task in a GSPO group.")
@click.option("--tasks-per-step", type=int, default=None, help="Groups per optimizer step.")
@click.option("--bc-steps", type=int, default=None, help="Behaviour-cloning warm-start steps.")
@click.option("--no-bc", is_flag=True, help="No behaviour-cloning warm start.")
def train(steps: int | None, group_size: int | None, tasks_per_step: int | None, bc_steps: int | None, no_bc: bool,
          out: Path, seed: int, as_json: bool, **kwargs: Any) -> None:
    """Train an agent: behaviour cloning on the tasks' reference solutions, then GSPO.

    \b
    Examples:
      awctl agent train --env real -d terminal --policy tiny --tasks basic[:8] --steps 10 --out out/agent
      awctl agent train --env sim -d terminal --policy tiny --sim-model out/wm/final --out out/agent-sim
      awctl agent train --options recipe-stage.toml --out out/agent bc.steps=60 optim.lr=3e-4
    """
    extra: dict[str, Any] = {"steps": steps, "group_size": group_size, "tasks_per_step": tasks_per_step}
    options = _options(kwargs, extra)
    if bc_steps is not None or no_bc:
        bc = options.setdefault("bc", {})
        if bc_steps is not None:
            bc["steps"] = bc_steps
        if no_bc:
            bc["enabled"] = False
    result = _run("agent_train", options, out, seed)
    _print(result, out, as_json)


@agent.command(name="eval")
@_common
@click.option("--seeds", default=None, help="Comma-separated sampling seeds (episodes per task; default 0).")
@click.option("--temperature", type=float, default=None, help="Sampling temperature (default 0: greedy).")
def eval_(seeds: str | None, temperature: float | None, out: Path, seed: int, as_json: bool, **kwargs: Any) -> None:
    """Evaluate an agent on (held-out) tasks: success rate with a 95% interval, env steps, time split.

    \b
    Examples:
      awctl agent eval --env real -d terminal --policy out/agent/train/final --tasks basic[8:] --out out/eval
    """
    extra: dict[str, Any] = {"temperature": temperature}
    if seeds:
        try:
            extra["seeds"] = [int(s) for s in seeds.split(",") if s.strip()]
        except ValueError:
            raise click.BadParameter(f"{seeds!r} is not a comma-separated list of integers",
                                     param_hint="--seeds") from None
    options = _options(kwargs, extra)
    options.setdefault("env", "real")
    if "model" not in options:
        raise click.UsageError("give --policy (the model to evaluate)")
    result = _run("agent_eval", options, out, seed)
    _print(result, out, as_json)


def _print(result: Any, out: Path, as_json: bool) -> None:
    from awctl.cli.output import emit_json

    if as_json:
        emit_json({"summary": result.summary, "outputs": {k: str(v) for k, v in result.outputs.items()}})
        return
    click.echo(result.report)
    for name, path in result.outputs.items():
        click.echo(f"{name}: {path}")
    click.echo(json.dumps(result.summary, default=str))
