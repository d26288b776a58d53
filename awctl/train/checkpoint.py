"""Checkpoints: a Hugging Face ``save_pretrained`` directory plus ``trainer_state.pt``.

``<out>/checkpoints/step-<N>/`` holds the model (LoRA: merged weights plus ``adapter/``), the tokenizer
and the trainer state — optimizer, scheduler, RNG states (python, numpy, torch, cuda), the optimizer step
and the data position. A checkpoint is written into a temporary folder and renamed into place, so a
process killed while saving (SIGKILL included) leaves either the previous checkpoint or the new one,
never half of one: :func:`latest_checkpoint` only sees complete ones.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from typing import Any

import numpy as np

STATE_FILE = "trainer_state.pt"
DONE_MARK = "checkpoint.json"


def rng_state() -> dict[str, Any]:
    import torch

    state = {"python": random.getstate(), "numpy": np.random.get_state(), "torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict[str, Any]) -> None:
    import torch

    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def checkpoint_dirs(out: Path) -> list[Path]:
    """Complete checkpoints under ``out/checkpoints``, oldest first."""
    root = out / "checkpoints"
    if not root.is_dir():
        return []
    found = [p for p in root.glob("step-*") if (p / DONE_MARK).is_file()]
    return sorted(found, key=lambda p: int(p.name.split("-")[1]))


def latest_checkpoint(out: Path) -> Path | None:
    dirs = checkpoint_dirs(out)
    return dirs[-1] if dirs else None


def save_checkpoint(out: Path, step: int, save_model: Any, state: dict[str, Any], keep: int, *, rank: int = 0,
                    barrier: Any = None) -> Path:
    """Write checkpoint ``step``: ``save_model(folder)`` writes the model, ``state`` goes to
    ``trainer_state.pt``; then the oldest checkpoints beyond ``keep`` are removed.

    In a multi-process run every rank calls this with its ``rank`` and a ``barrier``: every rank runs
    ``save_model`` (DeepSpeed writes one shard per rank), rank 0 alone prepares, seals and renames the folder."""
    import torch

    def wait() -> None:
        if barrier is not None:
            barrier()

    root = out / "checkpoints"
    final = root / f"step-{step}"
    tmp = root / f".tmp-step-{step}"
    if rank == 0:
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
    wait()
    save_model(tmp)
    wait()
    if rank == 0:
        torch.save({**state, "rng": rng_state()}, tmp / STATE_FILE)
        (tmp / DONE_MARK).write_text(json.dumps({"step": step}) + "\n", encoding="utf-8")
        shutil.rmtree(final, ignore_errors=True)
        tmp.rename(final)
        for old in checkpoint_dirs(out)[:-keep]:
            shutil.rmtree(old, ignore_errors=True)
    wait()
    return final


def load_state(folder: Path) -> dict[str, Any]:
    import torch

    return torch.load(folder / STATE_FILE, map_location="cpu", weights_only=False)
