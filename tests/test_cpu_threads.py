"""CPU generation uses the cores, not the kernel: measured in fresh processes (torch's OpenMP settings are
fixed when torch is first imported, so each check starts its own interpreter).

* no more threads do compute work than the process has cores;
* idle OpenMP workers sleep instead of spinning;
* decoding reuses freed memory instead of page-faulting fresh memory every step (issue 11: an audit spent
  42% of its CPU time in the kernel).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from awctl.models.backends.cpu_runtime import usable_cores

REPO = Path(__file__).resolve().parents[1]

# Per-thread CPU ticks (user + system) of this process, from /proc.
THREAD_TICKS = """
import os
def thread_ticks():
    out = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            fields = open(f"/proc/self/task/{tid}/stat").read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        out[tid] = int(fields[11]) + int(fields[12])
    return out
"""


def run_python(code: str, **env: str) -> dict:
    """Run ``code`` in a fresh interpreter (no inherited OpenMP settings); it prints one JSON line last."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OMP_", "GOMP_", "MKL_"))}
    proc = subprocess.run(
        [sys.executable, "-c", THREAD_TICKS + textwrap.dedent(code)],
        capture_output=True, text=True, timeout=300, cwd=REPO,
        env={**clean, "PYTHONPATH": str(REPO), **env},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_generation_runs_no_more_compute_threads_than_cores() -> None:
    got = run_python("""
        import json
        from awctl.backend import ChatRequest
        from awctl.models.backends.cpu_runtime import import_torch
        from awctl.models.backends.transformers_backend import TransformersBackend
        import_torch().set_num_threads(8)  # an earlier part of the process sized the pool for another machine
        backend = TransformersBackend("tiny", batch_size=16)
        backend.lm.generation_config.min_new_tokens = 96  # enough work to measure
        before = thread_ticks()
        requests = [ChatRequest([{"role": "user", "content": "ls -la " * (400 + i)}], max_tokens=96)
                    for i in range(16)]
        backend.generate(requests)
        after = thread_ticks()
        used = {t: after[t] - before.get(t, 0) for t in after}
        print(json.dumps({"used": sorted(used.values(), reverse=True), "torch_threads": backend.num_threads}))
    """)
    total = sum(got["used"])
    assert total > 0, got
    # A compute thread is one that did a real share of the work; pools that only woke up (tokenizers'
    # Rayon workers, an idle OpenMP thread) are not.
    compute = [t for t in got["used"] if t >= 0.05 * total]
    assert len(compute) <= usable_cores(), got
    assert got["torch_threads"] <= usable_cores()


def test_idle_openmp_workers_sleep_instead_of_spinning() -> None:
    # Two threads even on one core: a parallel region, then the main thread sleeps. A spinning worker
    # burns CPU after every region (about half the wall time measured with the default policy here).
    got = run_python("""
        import json, os, time
        from awctl.models.backends.cpu_runtime import import_torch
        torch = import_torch()
        torch.set_num_threads(2)
        x = torch.ones(1 << 20)
        x.add_(1)
        before, start = thread_ticks(), time.perf_counter()
        for _ in range(60):
            x.add_(1)
            time.sleep(0.01)
        wall = time.perf_counter() - start
        after = thread_ticks()
        main = str(os.getpid())
        workers = sum(after[t] - before.get(t, 0) for t in after if t != main)
        print(json.dumps({"worker_s": workers / os.sysconf("SC_CLK_TCK"), "wall_s": wall,
                          "leaked": "OMP_WAIT_POLICY" in os.environ, "sum": float(x[0])}))
    """)
    assert got["sum"] == 62.0
    assert got["worker_s"] < 0.15 * got["wall_s"], got
    assert not got["leaked"]  # child processes (sandboxes) do not inherit the policy


def test_decoding_reuses_freed_memory_instead_of_page_faulting_every_step(tmp_path: Path) -> None:
    # One layer with wide keys/values: at batch 8 and ~600 positions each layer's cache tensor is ~40 MiB,
    # above glibc's largest mmap threshold (32 MiB), so without reuse every decoding step maps and
    # zero-fills a new one per layer and per K/V: ~20,000 page faults a step (measured 1.2 million for
    # these 60 steps when reuse is off; a few thousand with it).
    from transformers import AutoTokenizer

    from awctl.models.tiny import build_tiny_model, default_tiny_model

    tok = AutoTokenizer.from_pretrained(str(default_tiny_model()), local_files_only=True)
    model = build_tiny_model(tok, out_dir=tmp_path / "wide", layers=1, hidden=64, heads=16, head_dim=128)
    got = run_python(f"""
        import json, resource
        from awctl.backend import ChatRequest
        from awctl.models.backends.transformers_backend import TransformersBackend
        backend = TransformersBackend({str(model)!r}, batch_size=8, prefix_sharing=False)
        backend.lm.generation_config.min_new_tokens = 60  # a random model must not stop early
        requests = [ChatRequest([{{"role": "user", "content": "cat notes.txt " * (180 + i)}}], max_tokens=60)
                    for i in range(8)]
        backend.generate(requests[:1])  # warm up: first-call allocations are not per step
        before = resource.getrusage(resource.RUSAGE_SELF)
        out = backend.generate(requests)
        after = resource.getrusage(resource.RUSAGE_SELF)
        print(json.dumps({{"faults": after.ru_minflt - before.ru_minflt,
                          "prompt": max(c[0].prompt_tokens for c in out),
                          "steps": max(c[0].completion_tokens for c in out)}}))
    """)
    assert got["prompt"] > 500 and got["steps"] == 60, got
    # Without reuse: >= 2 tensors x ~10,000 pages per step. With reuse: the first pass over the heap only.
    assert got["faults"] / got["steps"] < 4000, got


def test_the_awctl_command_makes_openmp_workers_sleep_before_anything_imports_torch() -> None:
    # A recipe's prep stage loads a tokenizer (which imports torch) before its eval stage builds a backend,
    # so the command sets the policy first; torch loaded afterwards anywhere in the process uses it.
    got = run_python("""
        import json, os, time
        from awctl.cli.main import main
        try:
            main(["--version"])
        except SystemExit:
            pass
        import torch
        torch.set_num_threads(2)
        x = torch.ones(1 << 20)
        x.add_(1)
        before, start = thread_ticks(), time.perf_counter()
        for _ in range(60):
            x.add_(1)
            time.sleep(0.01)
        wall = time.perf_counter() - start
        after = thread_ticks()
        main_tid = str(os.getpid())
        workers = sum(after[t] - before.get(t, 0) for t in after if t != main_tid)
        print(json.dumps({"worker_s": workers / os.sysconf("SC_CLK_TCK"), "wall_s": wall,
                          "policy": os.environ.get("OMP_WAIT_POLICY")}))
    """)
    assert got["policy"] == "PASSIVE"
    assert got["worker_s"] < 0.15 * got["wall_s"], got


def test_a_wait_policy_the_user_set_is_kept() -> None:
    got = run_python("""
        import json, os
        from awctl.models.backends.cpu_runtime import import_torch, prefer_idle_openmp_workers
        prefer_idle_openmp_workers()
        import_torch()
        print(json.dumps({"policy": os.environ.get("OMP_WAIT_POLICY")}))
    """, OMP_WAIT_POLICY="ACTIVE")
    assert got["policy"] == "ACTIVE"
