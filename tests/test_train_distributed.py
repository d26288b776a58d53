"""Distributed training on CPU, for real: two processes under torchrun (DDP) and under the DeepSpeed
launcher (ZeRO-2, ZeRO-3), gloo backend, compute the per-step losses of one process on the same data, seed
and global batch (to 1e-5) and end with the same weights; and ``awctl train`` executes exactly the command
``awctl train --dry-run`` prints (read back from the launcher process's ``/proc/<pid>/cmdline``).

Global batch 4 sequences per optimizer step in every run: one process takes 2 per micro-batch × 2
micro-batches; each of two processes takes 1 × 2 (rank ``r`` gets every second sample of the window).
A checkpoint is written mid-run (``save_every``), so the multi-rank save path runs too.

Every run is a process tree started in its own session; on failure or timeout the whole tree is killed
by pid (torchrun starts its workers in sessions of their own, so a process-group kill would miss them).
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("torch")

REPO = Path(__file__).resolve().parents[1]
STEPS = 5
TOLERANCE = 1e-5
RUN_TIMEOUT = 150  # seconds per run; the first DeepSpeed run on a machine also compiles its CPU Adam op


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_prep(tmp: Path) -> Path:
    """Twelve small shell-like trajectories, masked and packed (64-token blocks) with a local BPE."""
    from awctl.data.pipeline import PrepConfig, run_prep
    from awctl.trajectory import SystemPrompt, Trajectory, Turn, write_trajectories

    trajs = [Trajectory(id=f"t{i}", domain="synthetic", source=f"s{i}", system=SystemPrompt(raw="Simulate a shell."),
                        turns=[Turn(action=f"echo w{i}-{k}\n", observation=f"$ echo w{i}-{k}\nw{i}-{k}\n$ ")
                               for k in range(3)]) for i in range(12)]
    write_trajectories(tmp / "trajs.jsonl", trajs)
    run_prep(PrepConfig(inputs=[str(tmp / "trajs.jsonl")], out=str(tmp / "prep"), tokenizer="train:300",
                        block_size=64, split="train=1", verify=False, dedupe=False, allow_unknown_domains=True), {})
    return tmp / "prep"


def train_args(prep: Path, out: Path, *extra: str) -> list[str]:
    """``awctl train`` arguments of a 5-step CPT run of a tiny random-init model."""
    return ["train", "--stage", "cpt", "--data", str(prep), "--model", "tiny", "--tokenizer",
            str(prep / "tokenizer"), "--out", str(out), "--steps", str(STEPS), "save_every=3",
            "optim.lr=3e-3", "optim.warmup_steps=1", "tiny.layers=2", "tiny.hidden=32", "tiny.heads=2",
            "tiny.head_dim=16", "tiny.intermediate=64", *extra]


def child_env() -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
           "TOKENIZERS_PARALLELISM": "false"}
    for key in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        env.pop(key, None)  # each run's launcher sets its own
    return env


def awctl(*args: str) -> list[str]:
    return [sys.executable, "-m", "awctl.cli.main", *args]


def process_table() -> dict[int, int]:
    """``{pid: parent pid}`` of every process visible in /proc."""
    table = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # Field 4 is the parent pid; the command name (field 2) may hold spaces, so split after its ')'.
        table[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    return table


def descendants(pid: int) -> list[int]:
    table = process_table()
    found, frontier = [], [pid]
    while frontier:
        parent = frontier.pop()
        kids = [p for p, pp in table.items() if pp == parent]
        found += kids
        frontier += kids
    return found


def cmdline(pid: int) -> list[str] | None:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    return [part.decode() for part in raw.split(b"\0")[:-1]] or None


def kill_tree(proc: subprocess.Popen) -> None:
    """SIGKILL ``proc`` and every process under it, by pid (children first found, then the root)."""
    for pid in reversed(descendants(proc.pid)):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def run_awctl(args: list[str], log: Path, timeout: float = RUN_TIMEOUT) -> list[str] | None:
    """Run ``awctl <args>`` to completion; returns the command line of the launcher process it started
    (its first child), or None when it started none. Fails with the run's output tail on error."""
    with open(log, "w") as handle:
        proc = subprocess.Popen(awctl(*args), env=child_env(), stdout=handle, stderr=subprocess.STDOUT,
                                start_new_session=True, cwd=REPO)
        launched: list[str] | None = None
        deadline = time.monotonic() + timeout
        try:
            while proc.poll() is None:
                if launched is None:
                    kids = [p for p, pp in process_table().items() if pp == proc.pid]
                    launched = cmdline(kids[0]) if kids else None
                if time.monotonic() > deadline:
                    raise AssertionError(f"awctl train ran over {timeout} s:\n{log.read_text()[-3000:]}")
                time.sleep(0.05)
        finally:
            if proc.poll() is None:
                kill_tree(proc)
    assert proc.returncode == 0, f"awctl {' '.join(args[:3])} exited {proc.returncode}:\n{log.read_text()[-4000:]}"
    return launched


def dry_run_command(args: list[str]) -> list[str]:
    """The argv ``awctl train --dry-run`` prints (its last output line)."""
    proc = subprocess.run(awctl(*args, "--dry-run"), env=child_env(), capture_output=True, text=True, timeout=60,
                          cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return shlex.split(proc.stdout.rstrip().rsplit("\n", 1)[-1])


def losses(out: Path) -> dict[int, float]:
    rows = [json.loads(line) for line in (out / "train" / "metrics.jsonl").read_text().splitlines()]
    return {r["step"]: r["loss"] for r in rows}


def weights(folder: Path) -> dict[str, object]:
    from safetensors.torch import load_file

    return load_file(str(folder / "model.safetensors"))


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """``(prep, out)`` of the one-process run: 2 sequences per micro-batch × 2 micro-batches per step."""
    tmp = tmp_path_factory.mktemp("dist")
    prep = make_prep(tmp)
    out = tmp / "single"
    args = train_args(prep, out, "batch_size=2", "grad_accum=2")
    launched = run_awctl(args, tmp / "single.log")
    assert launched == dry_run_command(args)  # the python launcher runs the printed worker, one process
    assert sorted(losses(out)) == list(range(1, STEPS + 1))
    return prep, out


def check_distributed_run(reference: tuple[Path, Path], tmp: Path, name: str, launcher: list[str]) -> None:
    prep, single = reference
    out = tmp / name
    args = train_args(prep, out, "batch_size=1", "grad_accum=2", "nproc_per_node=2", f"master_port={free_port()}",
                      *launcher)
    printed = dry_run_command(args)
    started = time.monotonic()
    launched = run_awctl(args, tmp / f"{name}.log")
    took = time.monotonic() - started
    # What ran is what the dry run printed: the same interpreter, launcher module and arguments.
    assert launched == printed, (launched, printed)

    want, got = losses(single), losses(out)
    assert sorted(got) == sorted(want)
    diffs = {s: abs(got[s] - want[s]) for s in want}
    print(f"{name}: {took:.1f} s; max |loss difference| over {STEPS} steps {max(diffs.values()):.2e}")
    for step in want:
        assert got[step] == pytest.approx(want[step], abs=TOLERANCE), (name, step, got[step], want[step])
    # The run trained the same weights, and its final model is a whole (gathered) HF checkpoint.
    a, b = weights(single / "train" / "final"), weights(out / "train" / "final")
    assert a.keys() == b.keys()
    worst = max(float((a[k] - b[k]).abs().max()) for k in a)
    assert worst < 1e-4, (name, worst)
    # The mid-run checkpoint was sealed once, by rank 0, with every rank's part in it.
    ckpt = out / "train" / "checkpoints" / "step-3"
    assert (ckpt / "checkpoint.json").is_file() and (ckpt / "trainer_state.pt").is_file()
    assert not list((out / "train" / "checkpoints").glob(".tmp-*"))


@pytest.mark.slow
def test_torchrun_ddp_two_processes_match_one_process(reference: tuple[Path, Path], tmp_path: Path) -> None:
    check_distributed_run(reference, tmp_path, "ddp", ["--launcher", "torchrun"])


@pytest.mark.slow
@pytest.mark.parametrize("zero", [2, 3])
def test_deepspeed_zero_two_processes_match_one_process(reference: tuple[Path, Path], tmp_path: Path,
                                                        zero: int) -> None:
    pytest.importorskip("deepspeed")
    check_distributed_run(reference, tmp_path, f"zero{zero}",
                          ["--launcher", "deepspeed", "--deepspeed", str(REPO / "recipes" / "deepspeed" /
                                                                          f"zero{zero}.json")])
    # Every rank wrote its own ZeRO shard of the optimizer state into the checkpoint.
    shards = list((tmp_path / f"zero{zero}" / "train" / "checkpoints" / "step-3" / "deepspeed" / "state")
                  .glob("*optim_states.pt"))
    assert len(shards) == 2, shards
