"""How local CPU generation uses the machine: compute threads that sleep when idle, no more of them than
the process may run on, and an allocator that reuses freed memory instead of asking the kernel for fresh
pages on every decoding step.

The transformers backend calls these when it is built; each is process-wide and safe to call again.

Why (measured, see ``benchmarks/audit.py``; issue 11 found ``awctl audit`` spending 42% of its CPU time in
the kernel):

* **Allocator.** glibc serves every allocation above its mmap threshold (it adapts up to 32 MiB) with a
  fresh ``mmap`` and gives it back with ``munmap`` on free. While decoding, transformers' ``DynamicCache``
  grows each layer's keys and values with ``torch.cat`` (a new tensor per layer per step), and attention
  with a padding mask repeats the grouped keys and values to every head first. With SmolLM2-135M at batch
  16 those tensors pass 32 MiB beyond about 900 positions; from then on every step maps, zero-fills (one
  page fault per 4 KiB) and unmaps gigabytes. 16 rows x 480 new tokens: 142 million page faults, system
  time 56% of CPU time, 698 s wall; with :func:`reuse_freed_memory`, 0.37 million, 1.8%, 261 s.
* **OpenMP wait policy.** torch's OpenMP workers spin (busy-wait) after every parallel region before they
  sleep. When other processes share the cores, a spinning worker burns the time slice the thread it waits
  for needs: on 2 cores with a load of about 5, generation took 74 s with the default policy and 11 s with
  idle workers asleep (:func:`prefer_idle_openmp_workers`, :func:`import_torch`).
* **Threads.** torch sizes its pool from the CPU affinity mask; a container limited by a CPU quota
  (cgroup ``cpu.max``) can run fewer threads at once than that: :func:`limit_threads` caps the pool at
  :func:`usable_cores`.
"""

from __future__ import annotations

import contextlib
import ctypes
import math
import os
import platform
import sys
import threading
from pathlib import Path
from types import ModuleType
from typing import Any

# glibc mallopt parameters (malloc.h).
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
# Allocations up to this size come from the heap and are reused after free. Decoding tensors of models
# this backend runs on CPU stay well below it (SmolLM2-135M, batch 16, 8k positions: 302 MiB).
HEAP_LIMIT = 1 << 30

_lock = threading.Lock()
_allocator_tuned: bool | None = None


def _libc() -> Any | None:
    if sys.platform != "linux" or platform.libc_ver()[0] != "glibc":
        return None
    try:
        return ctypes.CDLL("libc.so.6", use_errno=True)
    except OSError:
        return None


def usable_cores() -> int:
    """How many threads this process can run at once: its CPU affinity, capped by a cgroup v2 CPU quota
    (``cpu.max``) when one is set."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    with contextlib.suppress(OSError, ValueError, IndexError):
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()[:2]
        if quota != "max":
            cores = min(cores, max(1, math.ceil(int(quota) / int(period))))
    return max(1, cores)


def prefer_idle_openmp_workers() -> bool:
    """For a program's entry point (the ``awctl`` command calls it first): OpenMP workers of this process
    and the processes it starts sleep while idle (``OMP_WAIT_POLICY=PASSIVE``), unless a policy is set
    already. Returns whether torch will load with a policy from the environment (False when torch is
    imported already: libgomp read its policy then).

    Needed besides :func:`import_torch` because torch is often imported before a backend is built
    (loading a tokenizer imports it), e.g. by a recipe's ``prep`` stage before its ``eval`` stage. The
    sandboxes of the real environments start with an environment of their own, so recorded observations
    do not see the variable.
    """
    if "torch" in sys.modules:
        return False
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    return True


def import_torch() -> ModuleType:
    """``import torch``; when this is the process's first import, its OpenMP workers sleep while idle
    (``OMP_WAIT_POLICY=PASSIVE``) instead of spinning.

    libgomp reads the policy once, when torch loads it, so the variable is set only around that import and
    removed again (child processes such as sandboxes do not inherit it). A policy the user set is kept. When
    torch was imported earlier, nothing changes.
    """
    if "torch" in sys.modules or "OMP_WAIT_POLICY" in os.environ:
        import torch

        return torch
    os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
    try:
        import torch
    finally:
        os.environ.pop("OMP_WAIT_POLICY", None)
    return torch


def limit_threads(requested: int | None = None) -> int:
    """Set torch's intra-op threads to ``requested``, or (``None``) cap the current count at
    :func:`usable_cores`. Process-wide. Returns the count in effect."""
    torch = import_torch()
    want = int(requested) if requested else min(torch.get_num_threads(), usable_cores())
    if want != torch.get_num_threads():
        torch.set_num_threads(max(1, want))
    return torch.get_num_threads()


def reuse_freed_memory() -> bool:
    """Make glibc keep freed blocks up to :data:`HEAP_LIMIT` for reuse instead of unmapping them (and
    never shrink the heap on its own), so a tensor freed in one decoding step backs the next step's
    tensor without new page faults. Returns whether the setting is in effect (False off glibc).

    Memory that stays with the process this way is returned by :func:`release_freed_memory`."""
    global _allocator_tuned
    with _lock:
        if _allocator_tuned is None:
            libc = _libc()
            _allocator_tuned = bool(
                libc is not None
                and libc.mallopt(_M_MMAP_THRESHOLD, HEAP_LIMIT) == 1
                and libc.mallopt(_M_TRIM_THRESHOLD, HEAP_LIMIT) == 1
            )
        return _allocator_tuned


def release_freed_memory() -> None:
    """Give the kernel back the free memory the allocator holds (``malloc_trim``): called once per
    ``generate`` call, so a long-lived process does not keep its peak size."""
    if _allocator_tuned:
        libc = _libc()
        if libc is not None:
            libc.malloc_trim(0)


def runtime_info() -> dict[str, Any]:
    """What is in effect in this process (for benchmarks and ``--verbose`` output)."""
    torch = sys.modules.get("torch")
    return {
        "usable_cores": usable_cores(),
        "torch_threads": torch.get_num_threads() if torch is not None else None,
        "allocator_reuses_freed_memory": bool(_allocator_tuned),
    }
