"""CPT training speed of awctl's loop relative to the Hugging Face ``Trainer``, like for like, and the
effect of awctl's per-document attention measured on its own.

    .venv/bin/python benchmarks/train.py [--docs 600] [--steps 30] [--block 512] [--batch 4] [--rounds 3]

Data: deterministic synthetic shell trajectories of varied lengths, prepped (information-theoretic CPT
mask, packed into blocks) with a locally trained BPE tokenizer. The same tiny random-init Llama, the same
blocks in the same order (HF's sampler is sequential), the same batch size, the same optimizer (torch AdamW,
lr 1e-3 constant, betas 0.9/0.95, clipping at 1.0, no accumulation), fp32, one thread, for every run.

**Same loss tokens.** A target is a loss token when its CPT weight is non-zero and it stays in its
document; HF gets ``labels = -100`` everywhere else, so both loops average cross-entropy over exactly the
same tokens (the weights here are 0/1, so the losses are the same function: the printed first-step loss
difference shows it, and the children's loss-token counts must agree or the run stops).

**Same LM-head work**, in two regimes, each printed:

* ``head=all`` — both compute the LM head and the vocabulary softmax at **every** position, also for
  zero-weight targets: the stock ``Trainer`` as it is, and awctl with ``lm_head="all"``;
* ``head=kept`` — both compute it only at positions whose target is a loss token in some row of the batch
  (``logits_to_keep``): a ``Trainer`` subclass overriding ``compute_loss``, and awctl with
  ``lm_head="weighted"``. (awctl's default ``auto`` picks ``kept`` only when it skips half the block.)

**Same attention** for the loop comparison: plain causal attention over the whole block (positions
``0..L-1``; tokens see earlier documents of the block), which is all the stock ``Trainer`` does with
packed rows; awctl runs it with ``attention="causal"``.

**Per-document attention effect**, separately: awctl's own attention (each document attends only to
itself, segment-wise SDPA, ``awctl.train.packed_attention``) against awctl with plain causal attention,
everything else equal.

Throughput is block slots per second of training wall time, step 1 excluded as warm-up in every run.
Each configuration runs in its own subprocess; ``--rounds`` rounds run every configuration one after the
other, and each ratio is taken within a round (side by side in time, so the load of a shared machine
weighs on both sides alike); the median and range over rounds are printed. Only ratios are reported:
absolute timings depend on the machine and are not targets.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
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


# One configuration per child process: "<loop> <attention> <head>" with loop awctl|hf.
CHILD = r"""
import json, sys, time, torch
torch.set_num_threads(1)
loop, attention, head, prep, out = sys.argv[1:6]
steps, batch = int(sys.argv[6]), int(sys.argv[7])
from pathlib import Path
from awctl.train.config import TrainSpec
from awctl.train.data import PackedBlocks
from awctl.train.losses import target_weights
from awctl.train.model import build_tiny
spec = TrainSpec(model="tiny", tokenizer=prep + "/tokenizer", steps=steps, batch_size=batch,
                 optim={"lr": 1e-3, "clip": 1.0, "warmup_steps": 0, "min_lr_ratio": 1.0, "betas": [0.9, 0.95]},
                 tiny={"hidden": 128, "heads": 4, "head_dim": 32, "layers": 2})
model_dir = build_tiny(prep + "/tokenizer", spec.tiny, Path(out) / "init", 0)
data = PackedBlocks(prep, seed=0)
L = data.block_size
batches = [data.batch(k * batch, batch) for k in range(steps)]  # what both loops train on, in this order
loss_tokens = sum(int((target_weights(b) > 0).sum()) for b in batches)
times, losses = [], []
if loop == "awctl":
    from awctl.train.loop import Trainer
    def clock(step, **kw):
        times.append(time.perf_counter())
        losses.append(kw.get("loss"))
    tr = Trainer(spec, model_path=str(model_dir), out=Path(out) / "run", seed=0, metric=clock,
                 lm_head={"all": "all", "kept": "weighted"}[head], attention=attention)
    tr.fit_packed(data)
else:
    import torch.nn.functional as F
    from transformers import AutoModelForCausalLM, Trainer, TrainerCallback, TrainingArguments
    model = AutoModelForCausalLM.from_pretrained(str(model_dir), dtype=torch.float32, attn_implementation="sdpa")
    rows = []
    for b in batches:
        tw = target_weights(b)
        for r in range(batch):
            labels = torch.full_like(b.input_ids[r], -100)
            labels[1:] = torch.where(tw[r] > 0, b.input_ids[r, 1:], -100)
            rows.append({"input_ids": b.input_ids[r], "labels": labels})
    assert sum(int((x["labels"] != -100).sum()) for x in rows) == loss_tokens

    class Recording(Trainer):
        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
            if head == "all":  # the stock loss: logits at every position, -100 ignored
                loss = super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
            else:  # logits only where some row has a loss token next
                targets = inputs["labels"][:, 1:]
                keep = (targets != -100).any(0).nonzero().squeeze(-1)
                logits = model(input_ids=inputs["input_ids"], logits_to_keep=keep, use_cache=False).logits
                loss = F.cross_entropy(logits.float().flatten(0, 1), targets[:, keep].flatten(), ignore_index=-100)
            losses.append(float(loss.detach()))
            return loss

    class Clock(TrainerCallback):
        def on_step_end(self, args, state, control, **kw):
            times.append(time.perf_counter())

    args = TrainingArguments(output_dir=out + "/hf", per_device_train_batch_size=batch, max_steps=steps,
                             learning_rate=1e-3, lr_scheduler_type="constant", adam_beta1=0.9, adam_beta2=0.95,
                             adam_epsilon=1e-8, weight_decay=0.0, optim="adamw_torch", max_grad_norm=1.0,
                             train_sampling_strategy="sequential", report_to=[], save_strategy="no",
                             logging_strategy="no", use_cpu=True, dataloader_num_workers=0, disable_tqdm=True)
    Recording(model=model, args=args, train_dataset=rows, callbacks=[Clock()]).train()
# Step 1 is warm-up: measure from its end to the last step's end.
tps = (steps - 1) * batch * L / (times[-1] - times[0])
print("RESULT" + json.dumps({"tokens_per_s": tps, "loss_tokens": loss_tokens, "losses": losses}))
"""

CONFIGS = [  # (name, loop, attention, head)
    ("hf/all", "hf", "causal", "all"),
    ("awctl-causal/all", "awctl", "causal", "all"),
    ("awctl-docs/all", "awctl", "documents", "all"),
    ("hf/kept", "hf", "causal", "kept"),
    ("awctl-causal/kept", "awctl", "causal", "kept"),
    ("awctl-docs/kept", "awctl", "documents", "kept"),
]


def run(cfg: tuple[str, str, str, str], prep: Path, out: Path, steps: int, batch: int) -> dict:
    name, loop, attention, head = cfg
    env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
    folder = out / name.replace("/", "-")
    proc = subprocess.run([sys.executable, "-c", CHILD, loop, attention, head, str(prep), str(folder), str(steps),
                           str(batch)], env=env, capture_output=True, text=True)
    if proc.returncode:
        sys.exit(f"{name} failed:\n{proc.stderr[-3000:]}")
    line = next(x for x in proc.stdout.splitlines() if x.startswith("RESULT"))
    return json.loads(line[6:])


def ratio_line(label: str, values: list[float]) -> str:
    spread = f" (range {min(values):.3f}-{max(values):.3f} over {len(values)} rounds)" if len(values) > 1 else ""
    return f"{label:<72} {statistics.median(values):.3f}{spread}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", type=int, default=600)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--block", type=int, default=512)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workdir", type=Path)
    args = ap.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="awctl-bench-train-"))
    work.mkdir(parents=True, exist_ok=True)
    prep = work / "prep" if (work / "prep" / "manifest.json").is_file() else make_prep(work, args.docs, args.block)
    from awctl.train.data import PackedBlocks
    from awctl.train.losses import target_weights

    data = PackedBlocks(prep, seed=0)
    first = [data.batch(k * args.batch, args.batch) for k in range(args.steps)]
    loss_share = sum(float((target_weights(b) > 0).float().mean()) for b in first) / len(first)
    kept = [float((target_weights(b) > 0).any(0).float().mean()) for b in first]
    kept_share = sum(kept) / len(kept)
    # awctl's default lm_head "auto" decides per batch; name it when it decides the same for every batch.
    auto = {"kept" if k * 2 < 1 else "all" for k in kept}

    rounds: list[dict[str, dict]] = []
    for r in range(args.rounds):
        got = {cfg[0]: run(cfg, prep, work / f"round{r}", args.steps, args.batch) for cfg in CONFIGS}
        counts = {v["loss_tokens"] for v in got.values()}
        if len(counts) != 1:
            sys.exit(f"loss-token counts differ between runs: {counts}")
        rounds.append(got)

    def ratios(a: str, b: str) -> list[float]:
        return [g[a]["tokens_per_s"] / g[b]["tokens_per_s"] for g in rounds]

    g = rounds[0]
    step1 = {head: abs(g[f"awctl-causal/{head}"]["losses"][0] - g[f"hf/{head}"]["losses"][0])
             for head in ("all", "kept")}
    drift = max(abs(a - b) for a, b in zip(g["awctl-causal/all"]["losses"], g["hf/all"]["losses"], strict=True))
    print(f"data: {len(data)} blocks of {data.block_size} tokens, packing efficiency "
          f"{data.packing_efficiency():.2%}; {args.steps} steps x {args.batch} blocks")
    print(f"loss tokens: {g['hf/all']['loss_tokens']} in every run ({loss_share:.1%} of targets); positions whose "
          f"target is a loss token in some row of the batch (head=kept): {kept_share:.1%}")
    print(f"same loss: |awctl - HF| at step 1 {step1['all']:.1e} (head=all), {step1['kept']:.1e} (head=kept); "
          f"largest over all {args.steps} steps (head=all) {drift:.1e}")
    print("ratios of tokens/s (> 1: the first is faster)")
    print(ratio_line("awctl / HF Trainer, LM head at every position", ratios("awctl-causal/all", "hf/all")))
    print(ratio_line("awctl / HF Trainer, LM head at loss positions only", ratios("awctl-causal/kept", "hf/kept")))
    print(ratio_line("per-document / plain causal attention (awctl, head=all)",
                     ratios("awctl-docs/all", "awctl-causal/all")))
    print(ratio_line("per-document / plain causal attention (awctl, head=kept)",
                     ratios("awctl-docs/kept", "awctl-causal/kept")))
    if len(auto) == 1:
        default = auto.pop()
        print(ratio_line(f"awctl as it trains (per-document, head auto = {default}) / stock HF Trainer",
                         ratios(f"awctl-docs/{default}", "hf/all")))


if __name__ == "__main__":
    main()
