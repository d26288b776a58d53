"""Entry point of the ``awctl`` command. Subcommands load lazily, so ``awctl --help`` stays fast and
never imports torch or vllm; library errors become one clear line plus a hint (``--debug`` for the
traceback)."""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
from typing import Any

import click

from awctl import __version__

# name -> ("module:attr", short help). Plugin commands may not take these names.
CORE_COMMANDS: dict[str, tuple[str, str]] = {
    "domains": ("awctl.cli.domains:domains", "List registered domains and what each provides."),
    "plugins": ("awctl.cli.plugins_cmd:plugins", "List loaded plugins and any that failed."),
    "doctor": ("awctl.cli.doctor:doctor", "Report which optional components work on this machine."),
    "run": ("awctl.cli.run:run", "Run a recipe's stages in a run directory."),
    "recipes": ("awctl.cli.recipes:recipes", "List, show and validate recipes."),
    "data": ("awctl.cli.data:data", "Convert, verify and prepare trajectory data."),
    "record": ("awctl.cli.record:record", "Record trajectories by running a policy in a real environment."),
    "eval": (
        "awctl.cli.eval:eval",
        "AgentWorldBench-compatible infer, judge (LLM or deterministic) and score.",
    ),
    "audit": ("awctl.cli.audit:audit", "Per-action-family fidelity audit of a simulator against real runs."),
    "simulate": ("awctl.cli.simulate:simulate", "Run a world model as an environment: repl, batch, serve."),
    "train": ("awctl.cli.train:train", "Train a world model: --stage cpt|sft|rl (CPT, rejection-sampling SFT, GSPO)."),
    "agent": ("awctl.cli.agent:agent", "Train an agent with RL in real/sim/hybrid environments; evaluate it."),
    "compare": ("awctl.cli.compare:compare", "Sim vs Real agent arms: equal budgets, held-out real success."),
}


def cli_registry() -> Any:
    """The plugin registry as the command line sees it: plugin commands that would shadow a core command
    are refused (and reported by ``awctl plugins``)."""
    from awctl.plugins import get_registry

    registry = get_registry()
    registry.reserve_commands(CORE_COMMANDS)
    return registry


def _load(target: str) -> click.Command:
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


class LazyGroup(click.Group):
    """Lists commands from a table and imports a command's module only when it is invoked."""

    def _plugin_commands(self) -> dict[str, Any]:
        return cli_registry().commands

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*CORE_COMMANDS, *self._plugin_commands()})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in CORE_COMMANDS:
            return _load(CORE_COMMANDS[name][0])
        spec = self._plugin_commands().get(name)
        return _load(spec.target) if spec else None

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # Help text from the table: listing commands must not import their modules.
        plugin_cmds = self._plugin_commands()
        rows = [(n, CORE_COMMANDS[n][1]) for n in sorted(CORE_COMMANDS)]
        rows += [(n, f"{s.help} [plugin {s.plugin}]") for n, s in sorted(plugin_cmds.items())]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="awctl")
@click.option("--debug", is_flag=True, help="Show full tracebacks on errors.")
@click.option("--trace-plugins", is_flag=True, help="Print every plugin hook call to stderr.")
@click.pass_context
def cli(ctx: click.Context, debug: bool, trace_plugins: bool) -> None:
    """awctl — build, train, serve and evaluate language world models for agents."""
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug
    if trace_plugins:
        os.environ["AWCTL_TRACE_PLUGINS"] = "1"


def main(argv: list[str] | None = None) -> None:
    from awctl.errors import AwctlError

    args = sys.argv[1:] if argv is None else argv
    debug = "--debug" in args or bool(os.environ.get("AWCTL_DEBUG"))
    from awctl.models.backends.cpu_runtime import prefer_idle_openmp_workers

    prefer_idle_openmp_workers()  # before anything imports torch: idle CPU threads sleep instead of spinning
    from awctl.cli.output import json_stdout

    try:
        with json_stdout() if "--json" in args else contextlib.nullcontext():
            rc = cli.main(args=args, prog_name="awctl", standalone_mode=False)
    except click.exceptions.Abort as exc:
        if isinstance(exc.__cause__, EOFError):  # click turns every EOFError into Abort: not a Ctrl-C
            click.secho(f"error: unexpected end of input ({exc.__cause__ or 'EOFError'})", fg="red", err=True)
            click.echo("hint: rerun with --debug for the traceback", err=True)
            sys.exit(1)
        click.echo("aborted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except AwctlError as exc:
        if debug:
            raise
        click.secho(f"error: {exc.message}", fg="red", err=True)
        if exc.hint:
            click.echo(f"hint: {exc.hint}", err=True)
        sys.exit(2)
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        sys.exit(130)
    except Exception as exc:
        if debug:
            raise
        click.secho(f"error: {type(exc).__name__}: {exc}", fg="red", err=True)
        click.echo("hint: rerun with --debug for the traceback", err=True)
        sys.exit(1)
    sys.exit(rc if isinstance(rc, int) else 0)


if __name__ == "__main__":
    main()
