"""``awctl train --stage cpt|sft|rl``: run one training stage outside a recipe, or print its launch.

Stage options come from ``--options FILE.toml`` (the same table a recipe's ``[[stages]]`` entry holds),
the convenience flags, and ``key=value`` overrides (values parsed as TOML, e.g. ``optim.lr=3e-4``).
Every launcher (``python``, ``torchrun``, ``deepspeed``) starts ``python -m awctl.stages.worker`` in a
child process, exactly the command ``--dry-run`` prints.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import click


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--stage", "stage", type=click.Choice(["cpt", "sft", "rl"]), required=True, help="Stage kind.")
@click.option("--out", "out", type=click.Path(path_type=Path), required=True, help="Output folder.")
@click.option("--options", "options_file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="TOML file with the stage's options (a recipe stage table).")
@click.option("--data", help="cpt: prep output folder.")
@click.option("--model", help="HF directory, .gguf file, pkg:<package>/<file>.gguf or 'tiny'.")
@click.option("--tokenizer", help="Tokenizer folder for a tiny model.")
@click.option("--trajectories", multiple=True, help="sft/rl: trajectory JSONL files (repeatable).")
@click.option("--steps", type=int, help="Optimizer steps.")
@click.option("--launcher", type=click.Choice(["python", "torchrun", "deepspeed"]))
@click.option("--deepspeed", "ds_config", help="DeepSpeed ZeRO JSON config.")
@click.option("--nproc-per-node", type=int)
@click.option("--nnodes", type=int)
@click.option("--hostfile", help="DeepSpeed hostfile for multi-node runs.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--resume", is_flag=True, help="Continue from the last checkpoint in --out.")
@click.option("--dry-run", is_flag=True, help="Print the resolved options and the launch command; run nothing.")
@click.argument("overrides", nargs=-1)
def train(stage: str, out: Path, options_file: Path | None, data: str | None, model: str | None,
          tokenizer: str | None, trajectories: tuple[str, ...], steps: int | None, launcher: str | None,
          ds_config: str | None, nproc_per_node: int | None, nnodes: int | None, hostfile: str | None,
          seed: int, resume: bool, dry_run: bool, overrides: tuple[str, ...]) -> None:
    """Train a world model with one stage kind (cpt, sft or rl).

    \b
    Examples:
      awctl train --stage cpt --data runs/x/stages/prep/prep --model tiny \\
          --tokenizer runs/x/stages/prep/prep/tokenizer --out out/cpt --steps 50
      awctl train --stage cpt --out out/cpt --resume            # after a crash
      awctl train --stage cpt --options recipes/gpu-cpt.toml --launcher deepspeed \\
          --deepspeed recipes/deepspeed/zero3.json --nproc-per-node 8 --nnodes 2 --hostfile hosts --dry-run
    """
    import tomllib

    from awctl.errors import AwctlError, InputError
    from awctl.keyvalue import parse_assignment, set_path
    from awctl.train.launch import format_command, launch_command

    options: dict[str, Any] = {}
    previous = out / "launch.json"
    if resume and options_file is None and previous.is_file():
        # Resuming: start from the options the interrupted run was launched with.
        saved = json.loads(previous.read_text(encoding="utf-8"))
        if saved.get("stage") == stage:
            options, seed = dict(saved["options"]), int(saved.get("seed", seed))
    if options_file is not None:
        try:
            options = tomllib.loads(options_file.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise InputError(f"{options_file}: invalid TOML: {exc}", hint="fix the options file") from None
        options.pop("kind", None)
        options.pop("name", None)
    flags = {"data": data, "model": model, "tokenizer": tokenizer, "steps": steps, "launcher": launcher,
             "deepspeed": ds_config, "nproc_per_node": nproc_per_node, "nnodes": nnodes, "hostfile": hostfile}
    options.update({k: v for k, v in flags.items() if v is not None})
    if trajectories:
        options["trajectories"] = list(trajectories)
    for item in overrides:
        path, value = parse_assignment(item, "override", "key.path=value")
        set_path(options, path, value)
    from pydantic import ValidationError

    from awctl.plugins import get_registry

    cls = get_registry().stage(stage).obj
    try:
        spec = cls.Options.model_validate(options)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or '(options)'}: {e['msg']}" for e in exc.errors())
        raise InputError(f"stage {stage}: {problems}", hint="see `docs/training.md` for the options") from None
    out = out.resolve()
    ckpts = out / "train" / "checkpoints"
    if not resume and not dry_run and ckpts.is_dir() and any(ckpts.glob("step-*")):
        raise AwctlError(f"{out} already holds checkpoints", hint="pass --resume to continue, or a new --out")
    if not resume and not dry_run and (out / "train").is_dir():
        import shutil

        shutil.rmtree(out / "train")
    launch = {"stage": stage, "options": spec.model_dump(mode="json"), "out": str(out), "seed": seed}
    argv = launch_command(spec, [str(out / "launch.json")])
    if dry_run:
        click.echo(json.dumps(launch, indent=2))
        click.echo(format_command(argv))
        return
    out.mkdir(parents=True, exist_ok=True)
    (out / "launch.json").write_text(json.dumps(launch, indent=2), encoding="utf-8")
    # Every launcher, the plain python one included, runs exactly the command --dry-run prints.
    rc = subprocess.call(argv, env=os.environ.copy())
    if rc:
        raise AwctlError(f"launcher {spec.launcher} exited with {rc}", hint=f"see {out / 'log.jsonl'}")
