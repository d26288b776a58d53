"""The training loop shared by every stage.

:class:`Trainer` owns the model, the engine (plain or DeepSpeed), checkpoints, resume and metrics.
``fit_packed`` trains on packed prep shards (CPT and SFT); the RL stage drives ``window``-sized updates
itself through :meth:`Trainer.optimizer_step` and the same checkpointing.

Determinism: seeds are set from the spec before the model is built; the data order is a pure function of
(seed, position); checkpoints carry optimizer, scheduler, RNG and data position. So on CPU a run resumed
from checkpoint N computes exactly the losses the uninterrupted run computed after step N
(``tests/test_train_resume.py`` kills a run with SIGKILL to prove it).
"""

from __future__ import annotations

import contextlib
import json
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from awctl.errors import AwctlError
from awctl.train.checkpoint import latest_checkpoint, load_state, save_checkpoint, set_rng_state
from awctl.train.config import TrainSpec
from awctl.train.data import PackedBlocks
from awctl.train.losses import LossStats, packed_lm_loss

MetricFn = Callable[..., None]


@dataclass
class TrainResult:
    """``checkpoint``: the final save_pretrained directory; ``losses``: loss per optimizer step run by
    this process (keyed by step number, 1-based); ``resumed_from``: the step a resume started at."""

    checkpoint: Path
    steps: int
    losses: dict[int, float] = field(default_factory=dict)
    resumed_from: int = 0
    tokens_per_s: float = 0.0
    first_loss: float | None = None
    last_loss: float | None = None


@dataclass
class RlResult(TrainResult):
    """A GSPO run's result (world-model and agent RL): reward and share of groups whose rewards tie, per step."""

    rewards: dict[int, float] = field(default_factory=dict)
    zero_variance_share: dict[int, float] = field(default_factory=dict)
    updates: int = 0  # optimizer steps that had at least one group with reward spread


def seed_everything(seed: int) -> None:
    import torch

    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def load_deepspeed_config(path: str | Path) -> dict[str, Any]:
    p = Path(path)
    try:
        return json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise AwctlError(f"{p}: DeepSpeed config not found", hint="see recipes/deepspeed/*.json") from None
    except json.JSONDecodeError as exc:
        raise AwctlError(f"{p}:{exc.lineno}: invalid JSON: {exc.msg}", hint="fix the DeepSpeed config") from None


class Trainer:
    """Set up model, engine and resume state for ``spec`` writing under ``out``.

    ``model_path``: a resolved model directory / .gguf file (``"tiny"`` builds a random-init model in
    ``out/init`` from ``tokenizer``). ``metric(step=..., **values)`` receives every logged record (the
    stage passes ``ctx.metric``); records also go to ``out/metrics.jsonl``. ``lm_head`` and ``attention``
    go to :func:`~awctl.train.losses.packed_lm_loss` (the defaults are the trainer's; the others exist for
    ``benchmarks/train.py``).
    """

    def __init__(self, spec: TrainSpec, *, model_path: str, out: Path, seed: int, resume: bool = False,
                 tokenizer: str | None = None, metric: MetricFn | None = None, log: Any = None,
                 deepspeed_config: dict[str, Any] | None = None, lm_head: str = "auto",
                 attention: str = "documents") -> None:
        import torch

        from awctl.train.engine import barrier, build_engine, dist_env, init_distributed
        from awctl.train.model import ADAPTER_DIR, build_tiny, load_for_training

        self.spec, self.out, self.seed, self.log = spec, Path(out), seed, log
        self.lm_head, self.attention = lm_head, attention  # see losses.packed_lm_loss
        self.out.mkdir(parents=True, exist_ok=True)
        self._metric = metric
        self.rank, local_rank, self.world = dist_env()
        # Multi-process runs join their process group first: rank 0 alone builds shared files (the tiny
        # model) while the others wait, and DeepSpeed reuses the group (gloo on CPU).
        init_distributed()
        seed_everything(seed)
        if spec.deepspeed and deepspeed_config is None:
            deepspeed_config = load_deepspeed_config(spec.deepspeed)
        base = model_path
        if model_path == "tiny":
            if self.rank != 0:
                barrier()
            base = str(build_tiny(tokenizer, spec.tiny, self.out / "init", seed))
            if self.rank == 0:
                barrier()
        self.base_model = base
        ckpt = latest_checkpoint(self.out) if resume else None
        self.resumed_from = 0
        if ckpt is not None and spec.lora is None:
            load_from, adapter = str(ckpt), None
        else:
            load_from, adapter = base, (ckpt / ADAPTER_DIR if ckpt is not None else None)
        model, self.tokenizer = load_for_training(load_from, attention=spec.attention,
                                                  gradient_checkpointing=spec.gradient_checkpointing,
                                                  lora=spec.lora, adapter_dir=adapter)
        device = spec.device
        if device == "auto":
            device = (f"cuda:{local_rank}" if self.world > 1 else "cuda") if torch.cuda.is_available() else "cpu"
        self.device = torch.device(device)
        model.to(self.device)
        self.engine = build_engine(model, spec, spec.steps, deepspeed_config)
        self.step = 0
        self.position = 0
        self.extra_state: dict[str, Any] = {}
        if ckpt is not None:
            state = load_state(ckpt)
            self.engine.load_state_dict(state["engine"], ckpt)
            self.step, self.position = int(state["step"]), int(state["position"])
            self.extra_state = state.get("extra", {})
            set_rng_state(state["rng"])
            self.resumed_from = self.step
            self._log("resumed", checkpoint=str(ckpt), step=self.step)
        use_bf16 = spec.bf16 == "on" or (spec.bf16 == "auto" and self.device.type == "cuda")
        self.autocast = (torch.autocast(self.device.type, dtype=torch.bfloat16) if use_bf16
                         else contextlib.nullcontext())

    # ── helpers ──
    def _log(self, event: str, **kw: Any) -> None:
        if self.log is not None and self.rank == 0:
            self.log.info(event, **kw)

    def metric(self, step: int, **values: Any) -> None:
        if self.rank != 0:
            return
        with open(self.out / "metrics.jsonl", "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"step": step, **values}) + "\n")
        if self._metric is not None:
            self._metric(step=step, **values)

    @property
    def model(self) -> Any:
        """What to call for forward passes (the engine's wrapper: DDP / DeepSpeed / the model)."""
        return self.engine.model

    def save(self, step: int, extra: dict[str, Any] | None = None) -> Path | None:
        """Checkpoint ``step`` (all ranks must call; rank 0 writes the HF directory and the trainer state,
        every rank its DeepSpeed shard)."""
        from awctl.train.engine import barrier
        from awctl.train.model import save_model_dir

        full = self.engine.full_state_dict()

        def write_model(folder: Path) -> None:
            if self.rank == 0:
                if full is not None:
                    self.engine.module.save_pretrained(str(folder), state_dict=full)
                    self.tokenizer.save_pretrained(str(folder))
                else:
                    save_model_dir(self.engine.module, self.tokenizer, folder)
            self.engine.save_extra(folder)

        state = {"engine": self.engine.state_dict(), "step": step, "position": self.position,
                 "extra": extra or {}}
        path = save_checkpoint(self.out, step, write_model, state, self.spec.keep_checkpoints, rank=self.rank,
                               barrier=barrier)
        self._log("checkpoint", step=step, path=str(path))
        return path

    def end_rl_step(self, result: RlResult, values: dict[str, Any], loss: float, bar: Any) -> None:
        """What every GSPO optimizer step ends with: the step's loss, reward and zero-variance share in
        ``result``, its metrics logged, the progress bar moved, a periodic checkpoint saved."""
        step, spec = self.step, self.spec
        result.losses[step] = loss
        result.rewards[step] = values["reward"]
        result.zero_variance_share[step] = values["zero_variance_share"]
        if result.first_loss is None:
            result.first_loss = loss
        result.last_loss = loss
        if step % spec.log_every == 0 or step == spec.steps:
            self.metric(step, **values)
        bar.update(1)
        bar.set_postfix(reward=f"{values['reward']:.3f}", zero_var=f"{values['zero_variance_share']:.2f}")
        if spec.save_every and step % spec.save_every == 0 and step < spec.steps:
            self.save(step)

    def save_final(self) -> Path:
        """The final model as ``out/final`` (LoRA merged), the directory later stages load."""
        import shutil

        from awctl.train.engine import barrier
        from awctl.train.model import save_model_dir

        final = self.out / "final"
        tmp = self.out / ".tmp-final"
        full = self.engine.full_state_dict()  # a collective under ZeRO-3: every rank calls it
        if self.rank == 0:
            shutil.rmtree(tmp, ignore_errors=True)
            if full is not None:
                self.engine.module.save_pretrained(str(tmp), state_dict=full)
                self.tokenizer.save_pretrained(str(tmp))
            else:
                save_model_dir(self.engine.module, self.tokenizer, tmp)
            shutil.rmtree(final, ignore_errors=True)
            tmp.rename(final)
        barrier()  # no rank returns before the final model exists
        return final

    def progress(self, total: int, initial: int) -> Any:
        from tqdm import tqdm

        return tqdm(total=total, initial=initial, desc="train", unit="step", file=sys.stderr,
                    disable=not sys.stderr.isatty() or self.rank != 0, dynamic_ncols=True)

    # ── CPT / SFT ──
    def fit_packed(self, data: PackedBlocks) -> TrainResult:
        """Train ``spec.steps`` optimizer steps over packed blocks (weighted causal LM loss)."""
        spec = self.spec
        result = TrainResult(checkpoint=self.out / "final", steps=spec.steps, resumed_from=self.resumed_from)
        per_window = spec.batch_size * spec.grad_accum * self.world
        bar = self.progress(spec.steps, self.step)
        tokens_total, time_total = 0, 0.0
        while self.step < spec.steps:
            t0 = time.perf_counter()
            batches = [data.batch(self.position + k * spec.batch_size * self.world, spec.batch_size,
                                  rank=self.rank, world=self.world) for k in range(spec.grad_accum)]
            from awctl.train.losses import target_weights

            # Every rank divides by the window's total weight over all ranks times 1/world: the engines
            # average gradients over ranks, so the update is that of one process training on the whole window.
            denom = float(sum(float(target_weights(b).sum()) for b in batches))
            denom = self._all_reduce(denom) / self.world if self.world > 1 else denom
            stats = LossStats()
            norm = None
            for k, batch in enumerate(batches):
                boundary = k == len(batches) - 1
                with self.engine.micro_batch(boundary):
                    loss, s = packed_lm_loss(self.model, batch, denom, device=self.device, autocast=self.autocast,
                                             lm_head=self.lm_head, attention=self.attention)
                    norm = self.engine.micro_backward(loss, boundary=boundary)
                stats.add(s)
            if self.world > 1:
                stats = self._reduce_stats(stats)  # report the loss of the whole window, not this rank's share
            lr = self.engine.lr()
            self.position += per_window
            self.step += 1
            dt = time.perf_counter() - t0
            tokens_total += stats.tokens
            time_total += dt
            values = stats.metrics()
            if stats.weight:  # a window whose targets all weigh 0 (sparse CPT masks) has no loss to report
                result.losses[self.step] = values["loss"]
                if result.first_loss is None:
                    result.first_loss = values["loss"]
                result.last_loss = values["loss"]
            else:
                values.pop("loss")
            if self.step % spec.log_every == 0 or self.step == spec.steps:
                self.metric(self.step, **values, lr=lr, grad_norm=norm, tokens=stats.tokens,
                            tokens_per_s=round(stats.tokens / dt, 1))
            bar.update(1)
            if "loss" in values:
                bar.set_postfix(loss=f"{values['loss']:.3f}")
            if spec.save_every and self.step % spec.save_every == 0 and self.step < spec.steps:
                self.save(self.step)
        bar.close()
        result.tokens_per_s = tokens_total / time_total if time_total else 0.0
        result.checkpoint = self.save_final()
        return result

    def _all_reduce(self, value: float) -> float:
        from awctl.train.engine import all_reduce_sum

        return all_reduce_sum([value], self.device)[0]

    def _reduce_stats(self, stats: LossStats) -> LossStats:
        """``stats`` summed over all ranks (one collective): loss sums, weights, tokens, per category."""
        from awctl.data.masking import CATEGORIES
        from awctl.train.engine import all_reduce_sum

        flat = [stats.loss_sum, stats.weight, float(stats.tokens)]
        for name in CATEGORIES:
            flat += stats.per_category.get(name, [0.0, 0.0])
        got = all_reduce_sum(flat, self.device)
        out = LossStats(loss_sum=got[0], weight=got[1], tokens=round(got[2]))
        for i, name in enumerate(CATEGORIES):
            s, w = got[3 + 2 * i], got[4 + 2 * i]
            if w:
                out.per_category[name] = [s, w]
        return out
