"""Prep throughput relative to tokenizer-only throughput, and peak memory at 1x and 10x input.

    .venv/bin/python benchmarks/prep.py [--base 2000] [--workers N] [--workdir DIR]

Data: deterministic synthetic toyshell trajectories (tests/fixtures/prep/datagen.py; the toy domain is
loaded as a real loose plugin so codecs and verifiers run). The tokenizer is trained once beforehand
and loaded from disk by both measurements.

* tokenizer-only: read the same JSONL, validate trajectories, render each with the chat template and
  tokenize with the tokenizer's batch call, in batches of prep's ``batch_size`` trajectories (prep calls
  the same Rust ``encode_batch`` on batches of that size) — the least work that turns the input into
  tokens;
* prep: ``run_prep`` end to end (ingest, codecs, verifiers, exact + MinHash dedupe, split, masking,
  chat tokens with offsets and role spans, packing, safetensors shards, manifest).

Targets (issue 4): prep/tokenizer-only throughput >= 0.5; peak RSS(10x) / peak RSS(1x) <= 1.2.
Wall-clock throughput depends on how busy the machine is; the ratio per CPU-second (all threads and
worker processes counted) does not, and is printed too. Each measurement runs in a fresh subprocess so peak RSS is its own (with ``--workers N`` prep's peak RSS
is the main process's; each forked worker holds one batch and the tokenizer).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "prep"


def _datagen():
    spec = importlib.util.spec_from_file_location("prep_datagen", FIXTURES / "datagen.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


def write_data(path: Path, n: int) -> None:
    dg = _datagen()
    rows = dg.make_rows(n, [f"src{k}" for k in range(max(4, n // 50))], seed=n)
    with open(path, "w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row) + "\n")


def measure(kind: str, data: Path, tok_dir: Path, out: Path) -> dict:
    """Runs in a child process: one measurement, printed as JSON with this process's peak RSS."""
    os.environ["AWCTL_PLUGINS_DIR"] = str(FIXTURES / "plugins")
    from awctl.models.tokenizer import load_tokenizer
    from awctl.plugins import get_registry
    from awctl.trajectory import read_trajectories

    domains = dict(get_registry(refresh=True).domains)
    # Warm-up outside the timing, for both: imports, tokenizer load, template compilation.
    tok = load_tokenizer(tok_dir)
    tok(tok.apply_chat_template([{"role": "user", "content": "warm up"}], tokenize=False))
    import awctl.data.pipeline  # noqa: F401

    t0, c0 = time.perf_counter(), _cpu_seconds()
    if kind == "tokenizer":
        from awctl.data.pipeline import PrepConfig
        from awctl.formats.view import View

        domain = domains["toyshell"]
        batch_size = PrepConfig.model_fields["batch_size"].default  # prep's batch: same tokenizer calls
        tokens, batch = 0, []

        def flush() -> int:
            enc = tok(batch, add_special_tokens=False)
            batch.clear()
            return sum(len(ids) for ids in enc["input_ids"])

        view = View(domain, "awctl")
        for traj in read_trajectories(data):
            msgs, _ = view.conversation(traj, domain.system_prompt(traj.system, 0))
            batch.append(tok.apply_chat_template(msgs, tokenize=False))
            if len(batch) >= batch_size:
                tokens += flush()
        tokens += flush()
    else:
        from awctl.data.pipeline import PrepConfig, run_prep

        manifest = run_prep(
            PrepConfig(
                inputs=[str(data)],
                out=str(out),
                tokenizer=str(tok_dir),
                block_size=1024,
                workers=int(os.environ.get("AWCTL_PREP_BENCH_WORKERS", "0")),
            ),
            domains=domains,
        )
        tokens = manifest["masking"]["tokens"] and sum(s["tokens"] for s in manifest["splits"].values())
    dt, cpu = time.perf_counter() - t0, _cpu_seconds() - c0
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "kind": kind,
        "seconds": dt,
        "cpu_seconds": cpu,
        "tokens": tokens,
        "tokens_per_s": tokens / dt,
        "tokens_per_cpu_s": tokens / cpu,
        "peak_rss_mb": rss_mb,
    }


def _cpu_seconds() -> float:
    """CPU time of this process (all threads, e.g. the tokenizer's) and its finished children (workers)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def _child(kind: str, data: Path, tok_dir: Path, out: Path) -> dict:
    cmd = [sys.executable, __file__, "--child", kind, str(data), str(tok_dir), str(out)]
    res = subprocess.run(cmd, capture_output=True, text=True, check=True, cwd=ROOT)
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", type=int, default=2000, help="trajectories at 1x")
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--workers", type=int, default=0, help="prep worker processes (0: in-process)")
    parser.add_argument("--child", nargs=4, metavar=("KIND", "DATA", "TOK", "OUT"))
    args = parser.parse_args()
    if args.child:
        kind, data, tok, out = args.child
        print(json.dumps(measure(kind, Path(data), Path(tok), Path(out))))
        return
    sys.path.insert(0, str(ROOT))
    os.environ["AWCTL_PREP_BENCH_WORKERS"] = str(args.workers)
    work = args.workdir or Path(tempfile.mkdtemp(prefix="awctl-prep-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    from awctl.models.tokenizer import train_bpe_tokenizer
    from awctl.trajectory import read_trajectories

    small, large = work / "x1.jsonl", work / "x10.jsonl"
    write_data(small, args.base)
    write_data(large, 10 * args.base)
    texts = (t.action + "\n" + t.observation for tr in read_trajectories(small) for t in tr.turns)
    train_bpe_tokenizer(texts, 4096, work / "tokenizer")

    results = {}
    for name, data in (("1x", small), ("10x", large)):
        results[name] = {
            "tokenizer": _child("tokenizer", data, work / "tokenizer", work / f"out-tok-{name}"),
            "prep": _child("prep", data, work / "tokenizer", work / f"out-prep-{name}"),
        }
    print(
        f"{'input':6} {'tokens':>10} {'tokenizer tok/s':>16} {'prep tok/s':>12} {'ratio':>6} "
        f"{'ratio per CPU-s':>16} {'prep peak RSS':>14}"
    )
    for name, r in results.items():
        ratio = r["prep"]["tokens_per_s"] / r["tokenizer"]["tokens_per_s"]
        cpu_ratio = r["prep"]["tokens_per_cpu_s"] / r["tokenizer"]["tokens_per_cpu_s"]
        print(
            f"{name:6} {r['prep']['tokens']:>10,} {r['tokenizer']['tokens_per_s']:>16,.0f} "
            f"{r['prep']['tokens_per_s']:>12,.0f} {ratio:>6.2f} {cpu_ratio:>16.2f} "
            f"{r['prep']['peak_rss_mb']:>11.0f} MB"
        )
    ratio_1x = results["1x"]["prep"]["tokens_per_s"] / results["1x"]["tokenizer"]["tokens_per_s"]
    growth = results["10x"]["prep"]["peak_rss_mb"] / results["1x"]["prep"]["peak_rss_mb"]
    cpu_1x = results["1x"]["prep"]["tokens_per_cpu_s"] / results["1x"]["tokenizer"]["tokens_per_cpu_s"]
    print(
        f"throughput ratio prep/tokenizer-only (1x): {ratio_1x:.2f} wall, {cpu_1x:.2f} per CPU-s (target >= 0.5)"
    )
    print(f"peak RSS growth 10x/1x: {growth:.2f}  (target <= 1.2)")
    print(f"prep workers: {args.workers}; cpus: {os.cpu_count()}")
    print(json.dumps({"ratio_1x": round(ratio_1x, 3), "rss_growth": round(growth, 3), "results": results}))


if __name__ == "__main__":
    main()
