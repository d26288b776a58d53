"""Launchers table and ``awctl train --dry-run``: the full command for single and multi-node runs."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

from click.testing import CliRunner

from awctl.cli.main import cli
from awctl.train.config import TrainSpec
from awctl.train.launch import LAUNCHERS, launch_command
from awctl.train.schedule import warmup_cosine


def test_launchers_are_a_table_of_commands_run_by_this_interpreter() -> None:
    assert set(LAUNCHERS) == {"python", "torchrun", "deepspeed"}
    spec = TrainSpec(launcher="deepspeed", deepspeed="z.json", nproc_per_node=8, nnodes=2, hostfile="hosts")
    cmd = launch_command(spec, ["launch.json"])
    # The launchers run as modules of awctl's own interpreter, never a `deepspeed`/`torchrun` found on PATH.
    assert cmd[:7] == [sys.executable, "-m", "deepspeed.launcher.runner", "--hostfile", "hosts", "--num_nodes=2",
                       "--num_gpus=8"]
    assert cmd[-3:] == ["--module", "awctl.stages.worker", "launch.json"]
    tr = launch_command(TrainSpec(launcher="torchrun", nproc_per_node=4), ["l.json"])
    assert tr[:5] == [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=4", "--nnodes=1"]
    assert tr[-3:] == ["-m", "awctl.stages.worker", "l.json"]
    multi = launch_command(TrainSpec(launcher="torchrun", nnodes=2, master_addr="10.0.0.1", master_port=1234), [])
    assert "--rdzv_backend=c10d" in multi and "--rdzv_endpoint=10.0.0.1:1234" in multi


def test_dry_run_prints_options_and_deepspeed_command(tmp_path: Path) -> None:
    res = CliRunner().invoke(cli, ["train", "--stage", "cpt", "--data", str(tmp_path), "--out", str(tmp_path / "o"),
                                   "--model", "/models/big", "--launcher", "deepspeed", "--deepspeed",
                                   "recipes/deepspeed/zero3.json", "--nproc-per-node", "8", "--nnodes", "2",
                                   "--hostfile", "hosts", "--dry-run", "optim.lr=2e-5"])
    assert res.exit_code == 0, res.output
    text, _, command = res.output.rstrip().rpartition("\n")
    launch = json.loads(text)
    assert launch["options"]["optim"]["lr"] == 2e-5 and launch["stage"] == "cpt"
    assert shlex.split(command)[:7] == [sys.executable, "-m", "deepspeed.launcher.runner", "--hostfile", "hosts",
                                        "--num_nodes=2", "--num_gpus=8"]
    assert not (tmp_path / "o").exists()  # a dry run writes nothing


def test_bad_option_names_the_field(tmp_path: Path) -> None:
    res = CliRunner().invoke(cli, ["train", "--stage", "cpt", "--data", "x", "--out", str(tmp_path),
                                   "--dry-run", "launcher=deepspeed"])
    assert res.exit_code != 0
    assert "needs deepspeed" in str(res.exception)


def test_warmup_then_cosine_to_the_floor() -> None:
    lrs = [warmup_cosine(s, total=10, warmup=2, min_ratio=0.1) for s in range(11)]
    assert lrs[0] == 0.5 and lrs[1] == 1.0
    assert all(a >= b for a, b in zip(lrs[1:], lrs[2:], strict=False))
    assert abs(lrs[10] - 0.1) < 1e-12


def test_training_stage_modules_do_not_import_torch() -> None:
    import subprocess
    import sys

    code = ("import sys, awctl.stages.train, awctl.cli.train, awctl.train.launch, awctl.train.config; "
            "assert 'torch' not in sys.modules and 'deepspeed' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)
