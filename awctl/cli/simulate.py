"""``awctl simulate``: talk to a world model interactively, replay data through it, or serve it.

* ``repl``  — type actions, see simulated observations; ``:backend`` / ``:perturb`` switch live.
* ``batch`` — teacher-forced replay of trajectories or AgentWorldBench rows → predictions JSONL.
* ``serve`` — OpenAI-compatible + environment-session HTTP server (docs/serving.md).
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Any

import click

from awctl.cli.options import backend_flags, backend_spec, pop_backend
from awctl.errors import AwctlError
from awctl.keyvalue import parse_assignments


def _build(name: str | None, options: dict[str, Any]) -> Any:
    """A backend from ``--backend``/``-O`` style values, with the project defaults (see
    :func:`awctl.cli.options.backend_spec`)."""
    from awctl.plugins import get_registry

    spec = {"backend": name, "model": options.pop("model", None), "base_url": options.pop("base_url", None),
            "api_key": options.pop("api_key", None), "backend_opt": ()}
    backend_name, opts = backend_spec(spec)
    opts.update(options)
    try:
        return get_registry().build_backend(backend_name, **opts)
    except TypeError as exc:
        raise AwctlError(
            f"backend {backend_name!r} does not take these options: {exc}",
            hint="see docs/serving.md for each backend's options",
        ) from None


def make_backend(flags: dict[str, Any]) -> Any:
    """The backend the command's :func:`~awctl.cli.options.backend_flags` name."""
    spec = pop_backend(flags)
    options = parse_assignments(spec.pop("backend_opt") or (), "--backend-opt")
    for key in ("model", "base_url", "api_key"):
        if spec.get(key) is not None:
            options[key] = spec[key]
    return _build(spec["backend"], options)


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
            params = parse_assignments(args[1:], "perturbation parameter")
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
            new = _build(args[0], parse_assignments(args[1:], "backend option"))
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
@backend_flags()
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
    **flags: Any,
) -> None:
    """Type actions and see the simulated observations (:help for commands)."""
    from rich.console import Console

    from awctl.plugins import get_registry
    from awctl.sim.env import SimEnv
    from awctl.sim.server import SessionManager

    console = Console(highlight=False)
    dom = get_registry().domain(domain)
    task = (
        SessionManager._task(dom, {"task_id": task_id, "instruction": instruction})
        if (task_id or instruction is not None)
        else None
    )
    be = make_backend(flags)
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
        perturbation_params=parse_assignments(params, "--param"),
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


@simulate.command()
@click.argument("input_path", metavar="INPUT", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("-o", "--output", type=click.Path(path_type=Path), required=True, help="Predictions JSONL.")
@backend_flags()
@click.option(
    "--format", "fmt", type=click.Choice(["auto", "trajectories", "awb"]), default="auto", show_default=True
)
@click.option("--style", type=click.Choice(["agentworldbench", "awctl"]), default="agentworldbench",
              show_default=True, help="Chat style the model was trained in.")
@click.option("--batch-size", type=int, default=32, show_default=True, help="Requests per backend call.")
@click.option("--limit", type=int, default=None, help="At most this many turns.")
@click.option("--max-tokens", type=int, default=1024, show_default=True)
@click.option("--temperature", type=float, default=0.0, show_default=True)
@click.option("--seed", type=int, default=None)
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def batch(input_path: Path, output: Path, fmt: str, style: str, batch_size: int, limit: int | None,
          max_tokens: int, temperature: float, seed: int | None, as_json: bool, **flags: Any) -> None:
    """Teacher-forced replay: predict every turn of INPUT from its true history (the ``simulate`` stage
    kind's library call, :func:`awctl.sim.batch.simulate_batch`).

    Each output line: id, trajectory_id, domain, turn, prediction (parsed observation), raw_output,
    reasoning, reference (the recorded observation as the model sees it), diagnostics, finish_reason.
    """
    from awctl.cli.output import emit_json
    from awctl.plugins import get_registry
    from awctl.sim.batch import detect_format, read_input, simulate_batch

    if batch_size < 1:
        raise click.BadParameter("must be at least 1", param_hint="--batch-size")
    domains = get_registry().domains
    fmt = detect_format(input_path) if fmt == "auto" else fmt
    with make_backend(flags) as be:
        summary = simulate_batch(read_input(input_path, fmt, domains), domains, be, output, style=style,
                                 batch_size=batch_size, limit=limit, max_tokens=max_tokens,
                                 temperature=temperature, seed=seed, source=str(input_path), fmt=fmt).to_dict()
    if as_json:
        emit_json(summary)
    else:
        click.echo(
            f"wrote {summary['predictions']} predictions to {output} in {summary['seconds']}s "
            f"({summary['empty_extractions']} with an empty extraction)"
        )


# ── serve ────────────────────────────────────────────────────────────────────────────────────────────


@simulate.command()
@backend_flags()
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
    **flags: Any,
) -> None:
    """Serve a backend over HTTP: OpenAI-compatible chat completions and environment sessions."""
    from awctl.sim.server import SESSION_OPTIONS, ServerSettings
    from awctl.sim.server import serve as run_server

    defaults = parse_assignments(session_opts, "--session-option")
    unknown = sorted(set(defaults) - set(SESSION_OPTIONS))
    if unknown:
        raise click.BadParameter(
            f"unknown session option(s) {unknown}; allowed: {sorted(SESSION_OPTIONS)}",
            param_hint="--session-option",
        )
    be = make_backend(flags)
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
        from awctl.plugins import get_registry

        run_server(be, settings, get_registry().domains, host=host, port=port, log_level=log_level,
                   on_ready=ready)
    finally:
        be.close()
