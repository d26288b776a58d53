"""Learning-rate schedule: linear warmup, then cosine decay to ``min_lr_ratio`` of the peak."""

from __future__ import annotations

import math


def warmup_cosine(step: int, *, total: int, warmup: int, min_ratio: float) -> float:
    """The lr multiplier at optimizer step ``step`` (0-based): ``(step+1)/warmup`` during warmup, then
    a half cosine from 1 to ``min_ratio`` reached at ``total``."""
    if warmup and step < warmup:
        return (step + 1) / warmup
    span = max(1, total - warmup)
    progress = min(1.0, (step - warmup) / span)
    return min_ratio + (1 - min_ratio) * 0.5 * (1 + math.cos(math.pi * progress))


def make_scheduler(optimizer: object, *, total: int, warmup: int, min_ratio: float) -> object:
    """A ``torch.optim.lr_scheduler.LambdaLR`` applying :func:`warmup_cosine` (its state dict resumes)."""
    import functools

    from torch.optim.lr_scheduler import LambdaLR

    return LambdaLR(optimizer, functools.partial(warmup_cosine, total=total, warmup=warmup,  # type: ignore[arg-type]
                                                 min_ratio=min_ratio))
