"""Simulator throughput: SimEnv steps/s batched (one backend call per round) vs sequential, and an
optional soak of the HTTP session server.

    python benchmarks/sim.py                      # 16 sessions, tiny model, batched vs sequential
    python benchmarks/sim.py --sessions 32 --steps 20 --max-tokens 16 64 --threads 1
    python benchmarks/sim.py --soak               # awctl simulate serve, 64 sessions x 200 steps

Target: batched >= 4x sequential at 16 sessions. Prints the measured numbers; never asserts.
"""

from __future__ import annotations

import argparse
import json
import time


def pick_domain() -> str:
    from awctl.plugins import get_registry

    names = sorted(get_registry().domains)
    if not names:
        raise SystemExit("no domain registered")
    return "terminal" if "terminal" in names else names[0]


ACTIONS = ("ls -la", "pwd", "cat notes.txt", "echo hello world", "whoami", "grep -rn TODO .", "python3 -V")


def run_rounds(envs, steps: int, batched: bool) -> float:
    from awctl.sim.env import step_many

    for env in envs:
        env.reset()
    start = time.perf_counter()
    for k in range(steps):
        actions = [ACTIONS[(i + k) % len(ACTIONS)] for i in range(len(envs))]
        if batched:
            step_many(envs, actions)
        else:
            for env, action in zip(envs, actions, strict=True):
                env.step(action)
    return time.perf_counter() - start


def batched_vs_sequential(args: argparse.Namespace) -> dict:
    from awctl.models.backends.transformers_backend import TransformersBackend
    from awctl.sim.env import SimEnv

    domain = args.domain or pick_domain()
    backend = TransformersBackend(
        args.model, batch_size=args.sessions, device="cpu", num_threads=args.threads
    )

    def make() -> list[SimEnv]:
        return [
            SimEnv(domain, backend, max_tokens=args.max_tokens, max_history_turns=args.history)
            for _ in range(args.sessions)
        ]

    run_rounds(make(), 1, batched=True)  # warm-up: allocator, kernels, tokenizer caches
    run_rounds(make(), 1, batched=False)
    seq_s = run_rounds(make(), args.steps, batched=False)
    bat_s = run_rounds(make(), args.steps, batched=True)
    n = args.sessions * args.steps
    return {
        "domain": domain,
        "model": args.model,
        "sessions": args.sessions,
        "steps": args.steps,
        "max_tokens": args.max_tokens,
        "threads": args.threads,
        "sequential_steps_per_s": round(n / seq_s, 2),
        "batched_steps_per_s": round(n / bat_s, 2),
        "speedup": round(seq_s / bat_s, 2),
    }


def soak(args: argparse.Namespace) -> dict:
    from awctl.sim.launch import ServerProcess
    from awctl.sim.loadtest import run_session_load

    domain = args.domain or pick_domain()
    with ServerProcess.awctl_serve("-b", "transformers", "-m", args.model, "--max-batch", "64") as srv:
        report = run_session_load(
            srv.url,
            domain,
            sessions=args.soak_sessions,
            steps=args.soak_steps,
            options={"max_tokens": args.max_tokens[0], "max_history_turns": args.history},
        )
    return {"domain": domain, **report.to_dict()}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", default="tiny")
    parser.add_argument("--domain", default=None)
    parser.add_argument("--sessions", type=int, default=16)
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument(
        "--max-tokens",
        type=int,
        nargs="+",
        default=[8, 32, 64],
        help="observation lengths to measure (one run each)",
    )
    parser.add_argument("--history", type=int, default=4, help="max_history_turns kept in each prompt")
    parser.add_argument("--threads", type=int, default=None, help="torch intra-op threads (default: torch's)")
    parser.add_argument("--soak", action="store_true", help="run the HTTP session soak instead")
    parser.add_argument("--soak-sessions", type=int, default=64)
    parser.add_argument("--soak-steps", type=int, default=200)
    args = parser.parse_args()
    if args.soak:
        print(json.dumps(soak(args), indent=2))
        return
    for max_tokens in args.max_tokens:
        args_one = argparse.Namespace(**{**vars(args), "max_tokens": max_tokens})
        result = batched_vs_sequential(args_one)
        print(json.dumps(result))
        verdict = "meets" if result["speedup"] >= 4 else "misses"
        print(
            f"max_tokens={max_tokens}: batched {result['batched_steps_per_s']} steps/s vs sequential "
            f"{result['sequential_steps_per_s']} steps/s at {args.sessions} sessions: {result['speedup']}x "
            f"({verdict} the 4x target)"
        )


if __name__ == "__main__":
    main()
