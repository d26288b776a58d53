"""The optimizer side of training behind one interface: plain PyTorch (AdamW, optional DDP) or DeepSpeed.

Callers do ``loss = f(engine.model, ...)``, then ``engine.micro_backward(loss, boundary)`` for each
micro-batch of an accumulation window (optionally both inside ``with engine.micro_batch(boundary):``, which
lets DDP skip the gradient all-reduce of all but the window's last micro-batch); at the boundary the engine
clips, steps the optimizer and the scheduler and returns the gradient norm. Losses passed in are already normalised over the whole window,
so neither engine rescales them.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

from awctl.train.config import TrainSpec
from awctl.train.schedule import make_scheduler


def dist_env() -> tuple[int, int, int]:
    """``(rank, local_rank, world_size)`` from the launcher's environment (1 process when unset)."""
    return int(os.environ.get("RANK", 0)), int(os.environ.get("LOCAL_RANK", 0)), int(os.environ.get("WORLD_SIZE", 1))


def init_distributed() -> bool:
    """Join the process group the launcher describes (``RANK``/``WORLD_SIZE``/``MASTER_ADDR``/``MASTER_PORT``):
    gloo on CPU, nccl on CUDA (each rank on GPU ``LOCAL_RANK``). Returns whether this is a multi-process run;
    one process, or a group already joined, is left as it is. DeepSpeed reuses the group joined here."""
    import torch
    import torch.distributed as dist

    _, local, world = dist_env()
    if world == 1:
        return False
    if not dist.is_initialized():
        if torch.cuda.is_available():
            torch.cuda.set_device(local)
        dist.init_process_group("nccl" if torch.cuda.is_available() else "gloo")
    return True


def barrier() -> None:
    """Wait for every rank (a no-op in a single process)."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        dist.barrier()


def all_reduce_sum(values: list[float], device: Any = None) -> list[float]:
    """Element-wise sums of ``values`` over all ranks, in float64 (``values`` itself in a single process).
    ``device``: where the collective runs (nccl needs a CUDA tensor; gloo a CPU one)."""
    import torch
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()):
        return list(values)
    if device is None or dist.get_backend() != "nccl":
        device = "cpu"
    t = torch.tensor(values, dtype=torch.float64, device=device)
    dist.all_reduce(t)
    return [float(x) for x in t.cpu()]


def make_optimizer(model: Any, spec: TrainSpec) -> Any:
    import torch

    params = [p for p in model.parameters() if p.requires_grad]
    o = spec.optim
    return torch.optim.AdamW(params, lr=o.lr, betas=o.betas, eps=o.eps, weight_decay=o.weight_decay)


class PlainEngine:
    """AdamW + warmup/cosine + global-norm clipping; DistributedDataParallel when WORLD_SIZE > 1."""

    kind = "plain"

    def __init__(self, model: Any, spec: TrainSpec, total_steps: int) -> None:
        import torch

        self.spec = spec
        self.rank, local, self.world = dist_env()
        self.model = model
        if self.world > 1:
            init_distributed()
            ids = [local] if torch.cuda.is_available() else None
            self.model = torch.nn.parallel.DistributedDataParallel(model, device_ids=ids)
        self.optimizer = make_optimizer(model, spec)
        self.scheduler = make_scheduler(self.optimizer, total=total_steps, warmup=spec.optim.warmup_steps,
                                        min_ratio=spec.optim.min_lr_ratio)

    @property
    def module(self) -> Any:
        return getattr(self.model, "module", self.model)

    def micro_batch(self, boundary: bool) -> Any:
        """Context for one micro-batch's forward and backward. Under DDP the micro-batches before the
        window's last one keep their gradients local (``no_sync``); the last backward all-reduces the sum."""
        if boundary or not hasattr(self.model, "no_sync"):
            return contextlib.nullcontext()
        return self.model.no_sync()

    def micro_backward(self, loss: Any, boundary: bool) -> float | None:
        import torch

        loss.backward()
        if not boundary:
            return None
        params = [p for p in self.module.parameters() if p.requires_grad]
        clip = self.spec.optim.clip
        norm = torch.nn.utils.clip_grad_norm_(params, clip if clip else float("inf"))
        self.optimizer.step()
        self.scheduler.step()
        self.optimizer.zero_grad(set_to_none=True)
        return float(norm)

    def lr(self) -> float:
        return float(self.optimizer.param_groups[0]["lr"])

    def state_dict(self) -> dict[str, Any]:
        return {"optimizer": self.optimizer.state_dict(), "scheduler": self.scheduler.state_dict()}

    def load_state_dict(self, state: dict[str, Any], folder: Any = None) -> None:
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])

    def save_extra(self, folder: Any) -> None:
        """Plain engines keep everything in ``trainer_state.pt``."""

    def full_state_dict(self) -> dict[str, Any] | None:
        return None


class DeepSpeedEngine:
    """``deepspeed.initialize`` with the ZeRO JSON config; optimizer and scheduler are awctl's own
    (passed as client objects) so DeepSpeed and the plain loop optimise the same objective the same way.
    Batch size, accumulation and clipping in the config are set from the training spec."""

    kind = "deepspeed"

    def __init__(self, model: Any, spec: TrainSpec, total_steps: int, config: dict[str, Any]) -> None:
        import deepspeed
        import torch

        self.spec = spec
        self.rank, _, self.world = dist_env()
        cfg = dict(config)
        cfg["train_micro_batch_size_per_gpu"] = spec.batch_size
        cfg["gradient_accumulation_steps"] = spec.grad_accum
        cfg.pop("train_batch_size", None)
        cfg["gradient_clipping"] = spec.optim.clip or 0.0
        cfg.setdefault("steps_per_print", 10**9)
        if not torch.cuda.is_available():
            cfg.pop("bf16", None)
            cfg.pop("fp16", None)
        cfg.setdefault("zero_allow_untested_optimizer", True)
        optimizer = make_optimizer(model, spec)
        scheduler = make_scheduler(optimizer, total=total_steps, warmup=spec.optim.warmup_steps,
                                   min_ratio=spec.optim.min_lr_ratio)
        self.model, self.optimizer, _, self.scheduler = deepspeed.initialize(
            model=model, optimizer=optimizer, lr_scheduler=scheduler, config=cfg,
            dist_init_required=not torch.distributed.is_initialized(),
        )
        self.zero_stage = int(cfg.get("zero_optimization", {}).get("stage", 0))

    @property
    def module(self) -> Any:
        return self.model.module

    def micro_batch(self, boundary: bool) -> Any:
        """DeepSpeed schedules its own gradient reduction over the accumulation window."""
        return contextlib.nullcontext()

    def micro_backward(self, loss: Any, boundary: bool) -> float | None:
        # The loss is already normalised over the window: DeepSpeed must not divide it by the
        # accumulation steps again.
        self.model.backward(loss, scale_wrt_gas=False)
        self.model.step()
        if not boundary:
            return None
        norm = self.model.get_global_grad_norm()
        return float(norm) if norm is not None else float("nan")

    def lr(self) -> float:
        return float(self.model.get_lr()[0])

    def state_dict(self) -> dict[str, Any]:
        return {}  # optimizer/scheduler state lives in DeepSpeed's own checkpoint (save_extra)

    def save_extra(self, folder: Any) -> None:
        self.model.save_checkpoint(str(folder / "deepspeed"), tag="state")

    def load_state_dict(self, state: dict[str, Any], folder: Any = None) -> None:
        self.model.load_checkpoint(str(folder / "deepspeed"), tag="state", load_module_strict=False)

    def full_state_dict(self) -> dict[str, Any] | None:
        """Full weights for ``save_pretrained`` (ZeRO-3 partitions them; gather on every rank)."""
        if self.zero_stage == 3:
            return self.model._zero3_consolidated_16bit_state_dict()
        return None


def build_engine(model: Any, spec: TrainSpec, total_steps: int, deepspeed_config: dict[str, Any] | None) -> Any:
    if deepspeed_config is not None:
        return DeepSpeedEngine(model, spec, total_steps, deepspeed_config)
    return PlainEngine(model, spec, total_steps)
