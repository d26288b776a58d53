"""Training core: loss goes down on packed shards, and a run killed with SIGKILL resumes exactly."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("torch")

from awctl.trajectory import SystemPrompt, Trajectory, Turn, write_trajectories  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def make_prep(tmp: Path, n: int = 12, block_size: int = 128) -> Path:
    """Small synthetic terminal-like trajectories, prepped (masked, packed) with a locally trained BPE."""
    from awctl.data.pipeline import PrepConfig, run_prep

    trajs = []
    for i in range(n):
        turns = [Turn(action=f"echo item{i}-{k}\n", observation=f"$ echo item{i}-{k}\nitem{i}-{k}\n$ ")
                 for k in range(3)]
        trajs.append(Trajectory(id=f"t{i}", domain="synthetic", source=f"s{i}",
                                system=SystemPrompt(raw="Simulate a shell."), turns=turns))
    src = tmp / "trajs.jsonl"
    write_trajectories(src, trajs)
    out = tmp / "prep"
    run_prep(PrepConfig(inputs=[str(src)], out=str(out), tokenizer="train:400", block_size=block_size,
                        split="train=1", verify=False, dedupe=False, allow_unknown_domains=True), {})
    return out


def _losses(path: Path) -> dict[int, float]:
    out = {}
    for line in path.read_text().splitlines():
        rec = json.loads(line)
        out[rec["step"]] = rec["loss"]
    return out


def _cmd(prep: Path, out: Path, steps: int, *extra: str) -> list[str]:
    return [sys.executable, "-m", "awctl.cli.main", "train", "--stage", "cpt", "--data", str(prep),
            "--model", "tiny", "--tokenizer", str(prep / "tokenizer"), "--out", str(out), "--steps", str(steps),
            "save_every=2", "batch_size=2", "grad_accum=2", "optim.lr=3e-3", "optim.warmup_steps=2",
            "tiny.hidden=32", "tiny.heads=2", "tiny.head_dim=16", *extra]


@pytest.mark.slow
def test_sigkilled_run_resumes_with_identical_losses(tmp_path: Path) -> None:
    prep = make_prep(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    steps = 60  # long enough that the kill lands mid-run
    full = tmp_path / "full"
    subprocess.run(_cmd(prep, full, steps), check=True, env=env, capture_output=True, cwd=tmp_path)
    killed = tmp_path / "killed"
    proc = subprocess.Popen(_cmd(prep, killed, steps), env=env, cwd=tmp_path, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.time() + 240
    ckpt_root = killed / "train" / "checkpoints"
    while time.time() < deadline and not (ckpt_root / "step-4").is_dir():
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    assert proc.wait() == -signal.SIGKILL
    assert not (killed / "train" / "final").exists(), "the run finished before it was killed"
    done = sorted(int(p.name.split("-")[1]) for p in ckpt_root.glob("step-*"))
    assert done, "no complete checkpoint before the kill"
    start = done[-1]
    assert start < steps
    subprocess.run(_cmd(prep, killed, steps, "--resume"), check=True, env=env, capture_output=True, cwd=tmp_path)
    ref = _losses(full / "train" / "metrics.jsonl")
    got = _losses(killed / "train" / "metrics.jsonl")
    resumed = {s: v for s, v in got.items() if s > start}
    assert sorted(resumed) == list(range(start + 1, steps + 1))
    for s, v in resumed.items():
        assert v == pytest.approx(ref[s], abs=1e-6), (s, v, ref[s])
    assert ref[steps] < ref[1]  # and training works: loss goes down
