"""Search-domain speed: corpus load/index time and per-call latency of the real SearchEnv.

Prints measured numbers (no thresholds): ``python benchmarks/search.py``.
"""

from __future__ import annotations

import statistics
import time

from awctl_domains.search.engine import CORPUS_FILE, SearchEngine
from awctl_domains.search.env import SearchEnv
from awctl_domains.search.tasks import extract, memory, search, tasks_for


def _timed(fn, n: int) -> list[float]:  # type: ignore[no-untyped-def]
    out = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return out


def main() -> None:
    loads = _timed(lambda: SearchEngine.from_file(CORPUS_FILE), 5)
    print(
        f"corpus load+index: median {statistics.median(loads) * 1e3:.1f} ms ({CORPUS_FILE.stat().st_size / 1e6:.2f} MB)"
    )
    env = SearchEnv()
    env.reset()
    queries = [
        "assert statement",
        "json dumps indent",
        "plugin hook",
        "compression library",
        "what is a heap",
    ]
    s = _timed(lambda: [env.step(search(q)) for q in queries], 40)
    print(f"web_search: median {statistics.median(s) / len(queries) * 1e6:.0f} us per query")
    e = _timed(lambda: env.step(extract("https://docs.python.org/3.11/topics/assert")), 200)
    print(f"web_extractor: median {statistics.median(e) * 1e6:.0f} us per call")
    m = _timed(lambda: env.step(memory("set", "k", "v")), 500)
    print(f"memory: median {statistics.median(m) * 1e6:.0f} us per call")
    tasks = tasks_for("all")

    def run_all() -> None:
        for task in tasks:
            env.reset(task)
            for a in task.solution:
                env.step(a)
            assert task.check(env).ok

    r = _timed(run_all, 5)
    print(f"all {len(tasks)} reference episodes + checks: median {statistics.median(r) * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
