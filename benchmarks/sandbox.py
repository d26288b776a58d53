"""Benchmark: the sandboxed shell's per-step overhead and parallel throughput.

    .venv/bin/python benchmarks/sandbox.py [--steps 200] [--sessions 16] [--docker]

Measures, for ``run("true")`` and a small command (``echo hi | wc -c``):

* p50/p90 latency of one step in a persistent ``SandboxedShell`` (pipe mode and terminal mode) against
  a raw ``bash -c`` subprocess on the host (a fresh process per step, what a naive runner would do),
  and the ratio sandbox / raw;
* throughput (steps/s) with ``--sessions`` shells stepping in parallel threads, against as many threads
  running raw ``bash -c``.

``--docker`` also measures the docker backend in a private engine (needs root and dockerd).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from awctl.envs.sandbox import SandboxedShell  # noqa: E402

COMMANDS = {"true": "true", "small": "echo hi | wc -c"}


def raw_step(command: str) -> None:
    subprocess.run(["bash", "-c", command], capture_output=True, check=False)


def latencies(step: Callable[[str], Any], command: str, n: int) -> list[float]:
    for _ in range(5):  # warm up
        step(command)
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        step(command)
        out.append(time.perf_counter() - t0)
    return out


def pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[int(q) - 1] if len(values) > 1 else values[0]


def throughput(make: Callable[[], tuple[Callable[[str], Any], Callable[[], None]]], sessions: int,
               steps: int, command: str) -> float:
    ready = [make() for _ in range(sessions)]
    barrier = threading.Barrier(sessions + 1)

    def work(step: Callable[[str], Any]) -> None:
        barrier.wait()
        for _ in range(steps):
            step(command)

    threads = [threading.Thread(target=work, args=(s,)) for s, _ in ready]
    for t in threads:
        t.start()
    barrier.wait()
    t0 = time.perf_counter()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - t0
    for _, close in ready:
        close()
    return sessions * steps / elapsed


def shell_factory(**options: Any) -> Callable[[], tuple[Callable[[str], Any], Callable[[], None]]]:
    def make() -> tuple[Callable[[str], Any], Callable[[], None]]:
        sh = SandboxedShell(**options)
        sh.start()
        return sh.run, sh.close

    return make


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=200, help="steps per latency measurement")
    ap.add_argument("--sessions", type=int, default=16, help="parallel sessions for throughput")
    ap.add_argument("--parallel-steps", type=int, default=30, help="steps per session for throughput")
    ap.add_argument("--docker", action="store_true", help="also measure the docker backend")
    args = ap.parse_args()

    variants: dict[str, dict[str, Any]] = {
        "bubblewrap pipe": {"terminal": False},
        "bubblewrap terminal": {"terminal": True},
    }
    engine = None
    if args.docker:
        from awctl.envs.dockerd import DockerEngine

        engine = DockerEngine()
        engine.start()
        engine.import_image()
        variants["docker pipe"] = {"backend": "docker", "docker_host": engine.host, "terminal": False}
        variants["docker terminal"] = {"backend": "docker", "docker_host": engine.host, "terminal": True}

    try:
        rows = []
        raw = {name: latencies(raw_step, cmd, args.steps) for name, cmd in COMMANDS.items()}
        for name in COMMANDS:
            rows.append(("raw bash -c", name, pct(raw[name], 50), pct(raw[name], 90), 1.0))
        for label, options in variants.items():
            with SandboxedShell(**options) as sh:
                for name, cmd in COMMANDS.items():
                    lat = latencies(sh.run, cmd, args.steps)
                    rows.append((label, name, pct(lat, 50), pct(lat, 90), pct(lat, 50) / pct(raw[name], 50)))

        print(f"\nStep latency ({args.steps} steps each)")
        print(f"{'runner':<22} {'command':<7} {'p50 ms':>8} {'p90 ms':>8} {'p50 / raw':>10}")
        for label, name, p50, p90, ratio in rows:
            print(f"{label:<22} {name:<7} {p50 * 1e3:8.2f} {p90 * 1e3:8.2f} {ratio:10.2f}")

        cmd = COMMANDS["small"]
        raw_tp = throughput(lambda: (raw_step, lambda: None), args.sessions, args.parallel_steps, cmd)
        print(f"\nThroughput, {args.sessions} parallel sessions x {args.parallel_steps} steps of {cmd!r}")
        print(f"{'runner':<22} {'steps/s':>9} {'vs raw':>8}")
        print(f"{'raw bash -c':<22} {raw_tp:9.1f} {1.0:8.2f}")
        for label, options in variants.items():
            tp = throughput(shell_factory(**options), args.sessions, args.parallel_steps, cmd)
            print(f"{label:<22} {tp:9.1f} {tp / raw_tp:8.2f}")
    finally:
        if engine is not None:
            engine.stop()


if __name__ == "__main__":
    main()
