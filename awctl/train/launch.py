"""Launchers as a table: how ``awctl train`` starts the training worker on one or many processes.

Each entry turns a :class:`~awctl.train.config.TrainSpec` and the worker's arguments into an argv:

* ``python`` — one process (CPU, or one GPU);
* ``torchrun`` — torchrun (``python -m torch.distributed.run``) with ``--nproc_per_node``/``--nnodes`` and a
  c10d rendezvous for multi-node runs;
* ``deepspeed`` — the DeepSpeed launcher (``python -m deepspeed.launcher.runner``), with ``--hostfile`` for
  multi-node runs.

Launchers run as modules of this interpreter (``sys.executable``), never as whatever ``torchrun`` or
``deepspeed`` comes first on ``PATH``: the launched workers use the environment awctl is installed in.
The worker is ``python -m awctl.stages.worker <launch.json>``. ``awctl train --dry-run`` prints the argv
and ``awctl train`` executes that same argv (``tests/test_train_distributed.py`` compares the printed
command with the launcher process's ``/proc`` command line).
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable

from awctl.train.config import TrainSpec

WORKER_MODULE = "awctl.stages.worker"


def _python(spec: TrainSpec, args: list[str]) -> list[str]:
    return [sys.executable, "-m", WORKER_MODULE, *args]


def _torchrun(spec: TrainSpec, args: list[str]) -> list[str]:
    cmd = [sys.executable, "-m", "torch.distributed.run", f"--nproc_per_node={spec.nproc_per_node}",
           f"--nnodes={spec.nnodes}"]
    if spec.nnodes > 1:
        cmd += ["--rdzv_backend=c10d", f"--rdzv_endpoint={spec.master_addr}:{spec.master_port}"]
    else:
        cmd += [f"--master_addr={spec.master_addr}", f"--master_port={spec.master_port}"]
    return [*cmd, "-m", WORKER_MODULE, *args]


def _deepspeed(spec: TrainSpec, args: list[str]) -> list[str]:
    cmd = [sys.executable, "-m", "deepspeed.launcher.runner"]
    if spec.hostfile:
        cmd += ["--hostfile", spec.hostfile, f"--num_nodes={spec.nnodes}"]
    cmd += [f"--num_gpus={spec.nproc_per_node}", f"--master_addr={spec.master_addr}",
            f"--master_port={spec.master_port}", "--module", WORKER_MODULE]
    return [*cmd, *args]


LAUNCHERS: dict[str, Callable[[TrainSpec, list[str]], list[str]]] = {
    "python": _python,
    "torchrun": _torchrun,
    "deepspeed": _deepspeed,
}


def launch_command(spec: TrainSpec, args: list[str]) -> list[str]:
    return LAUNCHERS[spec.launcher](spec, args)


def format_command(argv: list[str]) -> str:
    return " ".join(shlex.quote(a) for a in argv)
