"""DeepSpeed ZeRO-2 and ZeRO-3 (CPU, gloo, one process) give the same losses as the plain loop.

Each engine runs in its own subprocess: DeepSpeed initialises torch.distributed and global state.
The shipped recipes/deepspeed configs are used as they are (bf16 is dropped on CPU by the engine).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

REPO = Path(__file__).resolve().parents[1]

SCRIPT = r"""
import json, sys
from pathlib import Path
from awctl.train.config import TrainSpec
from awctl.train.data import PackedBlocks
from awctl.train.loop import Trainer
prep, out, ds = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
spec = TrainSpec(model="tiny", tokenizer=prep + "/tokenizer", steps=4, batch_size=2, grad_accum=2,
                 optim={"lr": 3e-3, "warmup_steps": 1}, tiny={"hidden": 32, "heads": 2, "head_dim": 16},
                 deepspeed=ds or None, launcher="deepspeed" if ds else "python")
tr = Trainer(spec, model_path="tiny", tokenizer=prep + "/tokenizer", out=out, seed=0)
res = tr.fit_packed(PackedBlocks(prep, seed=0))
print("LOSSES" + json.dumps(res.losses))
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run(prep: Path, out: Path, ds: str) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "RANK": "0", "LOCAL_RANK": "0", "WORLD_SIZE": "1",
           "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(_free_port())}
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(prep), str(out), ds], env=env, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = next(x for x in proc.stdout.splitlines() if x.startswith("LOSSES"))
    return json.loads(line[len("LOSSES"):])


def _make_prep(tmp: Path) -> Path:
    from awctl.data.pipeline import PrepConfig, run_prep
    from awctl.trajectory import SystemPrompt, Trajectory, Turn, write_trajectories

    trajs = [Trajectory(id=f"t{i}", domain="synthetic", source=f"s{i}", system=SystemPrompt(raw="Simulate a shell."),
                        turns=[Turn(action=f"echo v{i}{k}\n", observation=f"$ echo v{i}{k}\nv{i}{k}\n$ ")
                               for k in range(3)]) for i in range(10)]
    write_trajectories(tmp / "t.jsonl", trajs)
    run_prep(PrepConfig(inputs=[str(tmp / "t.jsonl")], out=str(tmp / "prep"), tokenizer="train:400", block_size=128,
                        split="train=1", verify=False, dedupe=False, allow_unknown_domains=True), {})
    return tmp / "prep"


@pytest.mark.slow
def test_deepspeed_zero2_and_zero3_losses_match_the_plain_loop(tmp_path: Path) -> None:
    pytest.importorskip("deepspeed")
    prep = _make_prep(tmp_path)
    plain = _run(prep, tmp_path / "plain", "")
    for stage in ("zero2", "zero3"):
        got = _run(prep, tmp_path / stage, str(REPO / "recipes" / "deepspeed" / f"{stage}.json"))
        assert sorted(got) == sorted(plain)
        for step in plain:
            assert got[step] == pytest.approx(plain[step], abs=1e-5), (stage, step, got[step], plain[step])
        # The final checkpoint is a plain HF directory with full (gathered) weights.
        assert (tmp_path / stage / "final" / "model.safetensors").is_file()
