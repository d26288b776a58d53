"""CPT throughput of awctl's training loop relative to a plain Hugging Face ``Trainer``, and packing
efficiency of the prep shards it trains on.

    .venv/bin/python benchmarks/train.py [--docs 600] [--steps 30] [--block 512] [--batch 4]

Data: deterministic synthetic shell trajectories of varied lengths, prepped (masked, packed) with a
locally trained BPE tokenizer. Model: the same tiny random-init Llama for both loops, same blocks, same
batch size and optimizer (AdamW, same lr, clipping at 1.0, no accumulation), fp32 on CPU.

* awctl: ``Trainer.fit_packed`` — packed blocks with per-document causal attention (no token sees
  another document; ``awctl.train.packed_attention``), per-document position ids and per-token loss
  weights;
* HF: ``transformers.Trainer`` on the same blocks as plain causal LM rows (labels −100 on padding),
  i.e. the usual packing without document boundaries (tokens attend across documents, which the
  awctl loop does not allow; its per-document attention is never more work than HF's causal attention).

Prints tokens/s of each (block slots processed per second of ``train()`` wall time, first step excluded
as warm-up in both), their ratio (target ≥ 1.0) and the share of block slots holding real tokens
(target ≥ 95%). Each loop runs in its own subprocess, one thread each, one after the other.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def make_prep(work: Path, docs: int, block: int) -> Path:
    import random

    from awctl.data.pipeline import PrepConfig, run_prep
    from awctl.trajectory import SystemPrompt, Trajectory, Turn, write_trajectories

    rng = random.Random(0)
    words = ["alpha", "beta", "gamma", "delta", "log", "data", "src", "tmp", "notes", "report"]
    trajs = []
    for i in range(docs):
        turns = []
        for _ in range(rng.randint(1, 6)):
            name = f"{rng.choice(words)}{rng.randint(0, 99)}.txt"
            body = "\n".join(" ".join(rng.choices(words, k=rng.randint(2, 8))) for _ in range(rng.randint(0, 6)))
            turns.append(Turn(action=f"cat {name}\n", observation=f"$ cat {name}\n{body}\n$ "))
        trajs.append(Trajectory(id=f"b{i}", domain="synthetic", source=f"s{i}",
                                system=SystemPrompt(raw="Simulate a shell."), turns=turns))
    write_trajectories(work / "t.jsonl", trajs)
    run_prep(PrepConfig(inputs=[str(work / "t.jsonl")], out=str(work / "prep"), tokenizer="train:1024",
                        block_size=block, split="train=1", verify=False, dedupe=False, allow_unknown_domains=True), {})
    return work / "prep"


CHILD = r"""
import json, sys, time, torch
torch.set_num_threads(1)
mode, prep, out, steps, batch = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
from pathlib import Path
from awctl.train.config import TrainSpec
from awctl.train.data import PackedBlocks
from awctl.train.model import build_tiny
spec = TrainSpec(model="tiny", tokenizer=prep + "/tokenizer", steps=steps, batch_size=batch, optim={"lr": 1e-3, "clip": 1.0},
                 tiny={"hidden": 128, "heads": 4, "head_dim": 32, "layers": 2})
model_dir = build_tiny(prep + "/tokenizer", spec.tiny, Path(out) / "init", 0)
data = PackedBlocks(prep, seed=0)
L = data.block_size
if mode == "awctl":
    from awctl.train.loop import Trainer
    times = []
    class Clock:
        def __call__(self, step, **kw):
            times.append(time.perf_counter())
    tr = Trainer(spec, model_path=str(model_dir), out=Path(out) / "run", seed=0, metric=Clock())
    t0 = time.perf_counter(); tr.fit_packed(data)
    # Step 1 is warm-up: measure from its end to the last step's end.
    tps = (steps - 1) * batch * L / (times[-1] - times[0])
else:
    from transformers import AutoModelForCausalLM, Trainer, TrainingArguments, TrainerCallback
    model = AutoModelForCausalLM.from_pretrained(str(model_dir), dtype=torch.float32)
    a = data.arrays
    rows = [{"input_ids": torch.tensor(a["input_ids"][data.index_at(i)].astype("int64")),
             "labels": torch.where(torch.tensor(a["doc_ids"][data.index_at(i)]) >= 0,
                                   torch.tensor(a["input_ids"][data.index_at(i)].astype("int64")), -100)}
            for i in range(steps * batch)]
    times = []
    class Clock(TrainerCallback):
        def on_step_end(self, args, state, control, **kw):
            times.append(time.perf_counter())
    args = TrainingArguments(output_dir=out + "/hf", per_device_train_batch_size=batch, max_steps=steps,
                             learning_rate=1e-3, lr_scheduler_type="cosine", report_to=[], save_strategy="no",
                             logging_strategy="no", use_cpu=True, dataloader_num_workers=0, disable_tqdm=True,
                             max_grad_norm=1.0)
    Trainer(model=model, args=args, train_dataset=rows, callbacks=[Clock()]).train()
    tps = (steps - 1) * batch * L / (times[-1] - times[0])
print("RESULT" + json.dumps({"tokens_per_s": tps}))
"""


def run(mode: str, prep: Path, out: Path, steps: int, batch: int) -> float:
    env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, "-c", CHILD, mode, str(prep), str(out / mode), str(steps), str(batch)],
                          env=env, capture_output=True, text=True)
    if proc.returncode:
        sys.exit(f"{mode} failed:\n{proc.stderr[-3000:]}")
    line = next(x for x in proc.stdout.splitlines() if x.startswith("RESULT"))
    return json.loads(line[6:])["tokens_per_s"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", type=int, default=600)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--block", type=int, default=512)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--workdir", type=Path)
    args = ap.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="awctl-bench-train-"))
    work.mkdir(parents=True, exist_ok=True)
    prep = make_prep(work, args.docs, args.block)
    from awctl.train.data import PackedBlocks

    eff = PackedBlocks(prep).packing_efficiency()
    ours = run("awctl", prep, work, args.steps, args.batch)
    hf = run("hf", prep, work, args.steps, args.batch)
    print(f"packing efficiency: {eff:.2%} real tokens (target >= 95%)")
    print(f"awctl CPT loop:       {ours:,.0f} tokens/s")
    print(f"HF Trainer:           {hf:,.0f} tokens/s")
    print(f"ratio awctl / HF:     {ours / hf:.3f} (target >= 1.0)")


if __name__ == "__main__":
    main()
