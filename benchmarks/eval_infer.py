"""Throughput of ``awctl eval infer`` against a one-request-at-a-time client on the same server.

The baseline is the official ``eval.py infer`` loop: one blocking chat-completions call per row, in
order (the ``openai`` client when installed, else urllib). awctl sends the same rows through its
``openai`` backend (``--concurrency`` requests in flight). Both build identical messages and write
identical prediction rows; the script checks that, then prints the wall times and their ratio.

By default the server is awctl's local :class:`~awctl.eval.replay_server.ReplayServer` with a fixed
per-request latency standing in for generation time (a server that, like vLLM, can serve concurrent
requests); pass ``--base-url``/``--model`` to measure a real OpenAI-compatible server instead.

    python benchmarks/eval_infer.py                      # local server, 0.2 s per request, 64 rows
    python benchmarks/eval_infer.py --base-url http://127.0.0.1:8000/v1 --model my-model --rows 128
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from awctl.eval.extract import inference_messages  # noqa: E402
from awctl.eval.rows import iter_input_rows  # noqa: E402
from awctl.plugins import get_registry  # noqa: E402


def load_rows(n: int) -> list[dict]:
    base = list(iter_input_rows([ROOT / "tests" / "fixtures" / "awb"], get_registry().domains))
    rows = []
    for i in range(n):
        row = dict(base[i % len(base)])
        row["id"] = f"{row['id']}#{i}"
        rows.append(row)
    return rows


def sequential(rows: list[dict], base_url: str, model: str, max_tokens: int) -> tuple[float, list[str]]:
    """One blocking request per row, in order, like the official script."""
    try:
        from openai import OpenAI

        client = OpenAI(base_url=base_url, api_key="EMPTY")

        def call(messages: list[dict]) -> str:
            resp = client.chat.completions.create(model=model, messages=messages, max_tokens=max_tokens,
                                                  temperature=0.0)
            return resp.choices[0].message.content or ""
    except ImportError:
        import urllib.request

        def call(messages: list[dict]) -> str:
            body = json.dumps({"model": model, "messages": messages, "max_tokens": max_tokens,
                               "temperature": 0.0}).encode()
            req = urllib.request.Request(f"{base_url}/chat/completions", body,
                                         {"Content-Type": "application/json"})
            with urllib.request.urlopen(req) as resp:
                return json.load(resp)["choices"][0]["message"]["content"] or ""

    start = time.perf_counter()
    gens = [call(inference_messages(r)) for r in rows]
    return time.perf_counter() - start, gens


def concurrent(rows: list[dict], base_url: str, model: str, max_tokens: int, concurrency: int) -> tuple[float, list]:
    from awctl.eval.infer import run_infer
    from awctl.plugins import build_backend

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "pred.jsonl"
        with build_backend("openai", base_url=base_url, model=model, concurrency=concurrency) as backend:
            start = time.perf_counter()
            summary = run_infer(rows, backend, out, max_tokens=max_tokens, temperature=0.0,
                                chunk_size=concurrency * 2, workers=2)
            seconds = time.perf_counter() - start
        assert summary.generated == len(rows), summary.to_dict()
        got = {r["id"]: r["gen"] for r in map(json.loads, out.read_text().splitlines())}
    return seconds, [got[r["id"]] for r in rows]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=64)
    ap.add_argument("--latency", type=float, default=0.2, help="per-request seconds of the local server")
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--max-tokens", type=int, default=256)
    ap.add_argument("--base-url", default=None, help="measure this server instead of the local one")
    ap.add_argument("--model", default="replay")
    args = ap.parse_args()
    rows = load_rows(args.rows)

    def run(base_url: str) -> None:
        seq_s, seq_gens = sequential(rows, base_url, args.model, args.max_tokens)
        con_s, con_gens = concurrent(rows, base_url, args.model, args.max_tokens, args.concurrency)
        same = sum(a == b for a, b in zip(seq_gens, con_gens, strict=True))
        print(f"rows: {len(rows)}  server: {base_url}  concurrency: {args.concurrency}")
        print(f"one-at-a-time client: {seq_s:7.2f} s  ({len(rows) / seq_s:6.1f} rows/s)")
        print(f"awctl eval infer:     {con_s:7.2f} s  ({len(rows) / con_s:6.1f} rows/s)")
        print(f"speed-up: {seq_s / con_s:.1f}x (target >= 4x); identical generations: {same}/{len(rows)}")

    if args.base_url:
        run(args.base_url)
        return
    from awctl.eval.replay_server import ReplayServer

    def respond(messages: list[dict], body: dict) -> str:
        # Deterministic in the request, so both clients must get identical answers.
        return f"<predicted_observation>\n{len(json.dumps(messages))} chars seen\n</predicted_observation>"

    with ReplayServer(respond, latency=args.latency) as srv:
        run(srv.base_url)
        print(f"server saw at most {srv.max_in_flight} requests at once")


if __name__ == "__main__":
    main()
