"""The transformers backend on a real tiny model (and, marked slow, the SmolLM2 GGUF from PyPI)."""

from __future__ import annotations

import math

import pytest

from awctl.backend import ChatRequest
from awctl.errors import AwctlError
from awctl.plugins import build_backend


def chat(text: str, **kw) -> ChatRequest:
    return ChatRequest(
        messages=[{"role": "system", "content": "You simulate a shell."}, {"role": "user", "content": text}],
        **kw,
    )


@pytest.fixture(scope="module")
def backend():
    be = build_backend("transformers", model="tiny", batch_size=4)
    yield be
    be.close()


def test_registered_and_built_through_the_registry(backend):
    from awctl.models.backends.transformers_backend import TransformersBackend

    assert isinstance(backend, TransformersBackend) and backend.name == "transformers"


def test_left_padded_batch_equals_one_by_one(backend):
    reqs = [chat("ls"), chat("cat a very long file name " * 6), chat("pwd"), chat("x " * 20), chat("echo hi")]
    batched = backend.generate(
        [ChatRequest(**{**r.__dict__, "max_tokens": 6, "logprobs": True}) for r in reqs]
    )
    for r, got in zip(reqs, batched, strict=True):
        alone = backend.generate([ChatRequest(**{**r.__dict__, "max_tokens": 6, "logprobs": True})])[0][0]
        assert got[0].token_ids == alone.token_ids
        assert all(
            math.isclose(a, b, abs_tol=1e-4) for a, b in zip(got[0].logprobs, alone.logprobs, strict=True)
        )


def test_completion_fields(backend):
    comp = backend.generate([chat("ls", max_tokens=5, logprobs=True)])[0][0]
    assert comp.completion_tokens == len(comp.token_ids) <= 5
    assert comp.prompt_tokens > 5
    assert len(comp.logprobs) == len(comp.token_ids) and all(lp <= 0 for lp in comp.logprobs)
    assert comp.finish_reason in ("stop", "length")
    assert backend.tokenizer.decode(comp.token_ids, skip_special_tokens=True) == comp.text


def test_n_and_seeds_are_reproducible(backend):
    req = chat("ls", max_tokens=8, temperature=1.0, n=3, seed=11)
    a = backend.generate([req])[0]
    b = backend.generate([req])[0]
    assert len(a) == 3
    assert [c.token_ids for c in a] == [c.token_ids for c in b]
    assert len({tuple(c.token_ids) for c in a}) > 1  # the three samples differ
    other = backend.generate([chat("ls", max_tokens=8, temperature=1.0, n=3, seed=12)])[0]
    assert [c.token_ids for c in other] != [c.token_ids for c in a]


def test_mixed_sampling_settings_keep_request_order(backend):
    reqs = [
        chat("a", max_tokens=3),
        chat("b", max_tokens=5, temperature=0.8, seed=1),
        chat("c", max_tokens=4),
    ]
    out = backend.generate(reqs)
    assert [len(o) for o in out] == [1, 1, 1]
    assert [o[0].completion_tokens <= r.max_tokens for o, r in zip(out, reqs, strict=True)] == [True] * 3
    assert out[0][0].token_ids == backend.generate([reqs[0]])[0][0].token_ids


@pytest.mark.not_a_component("depends on the random model's text")
def test_stop_strings_truncate(backend):
    full = backend.generate([chat("ls", max_tokens=12)])[0][0].text
    if len(full) < 4:
        pytest.skip("the tiny model produced too little text to cut")
    cut = full[2:4]
    out = backend.generate([chat("ls", max_tokens=12, stop=[cut])])[0][0]
    assert out.text == full[: full.find(cut)] and out.finish_reason == "stop"


def test_bad_requests_and_paths_fail_clearly(backend, tmp_path):
    with pytest.raises(AwctlError, match="request 0: has no messages"):
        backend.generate([ChatRequest(messages=[])])
    with pytest.raises(AwctlError, match="n must be at least 1"):
        backend.generate([chat("x", n=0)])
    with pytest.raises(AwctlError, match="not a local directory"):
        build_backend("transformers", model=str(tmp_path / "missing"))
    with pytest.raises(AwctlError, match="no config.json"):
        build_backend("transformers", model=str(tmp_path))


def test_build_tiny_model_is_deterministic(tmp_path):
    from awctl.models.tiny import build_tiny_model
    from awctl.models.tokenizer import train_bpe_tokenizer

    tok = train_bpe_tokenizer(["hello world " * 50, "ls -la\ncat file"], vocab_size=300)
    a = build_tiny_model(tok, out_dir=tmp_path / "a", seed=3)
    b = build_tiny_model(tok, out_dir=tmp_path / "b", seed=3)
    assert (a / "model.safetensors").read_bytes() == (b / "model.safetensors").read_bytes()
    import json

    cfg = json.loads((a / "config.json").read_text())
    assert cfg["head_dim"] == 32 and cfg["num_hidden_layers"] == 2 and cfg["hidden_size"] == 64


@pytest.mark.slow
def test_smollm2_gguf_generates_text(smollm2_gguf):
    be = build_backend("transformers", model=str(smollm2_gguf))
    try:
        out = be.generate([ChatRequest(messages=[{"role": "user", "content": "Say hello."}], max_tokens=6)])[
            0
        ][0]
    finally:
        be.close()
    assert out.text.strip() and out.completion_tokens >= 1
    assert any(c.isalpha() for c in out.text)


def test_shared_prefix_is_prefilled_once_with_identical_results():
    from awctl.models.backends.common import render_chat
    from awctl.models.backends.transformers_backend import TransformersBackend

    system = "You simulate a Linux terminal faithfully. " * 12
    reqs = [
        ChatRequest(
            messages=[{"role": "system", "content": system}, {"role": "user", "content": "ls " * k}],
            max_tokens=8,
            logprobs=True,
        )
        for k in range(1, 6)
    ]
    sharing = TransformersBackend("tiny", batch_size=8)
    plain = TransformersBackend("tiny", batch_size=8, prefix_sharing=False)
    try:
        rows = sharing._encode([render_chat(sharing.tokenizer, r.messages) for r in reqs], 8)
        assert sharing._shared_prefix_len(rows) >= 32  # the system prompt is shared and long enough
        got = sharing.generate(reqs)
        ref = plain.generate(reqs)
        alone = [plain.generate([r])[0] for r in reqs]
        for g, p, a in zip(got, ref, alone, strict=True):
            assert g[0].token_ids == p[0].token_ids == a[0].token_ids
            assert all(
                math.isclose(x, y, abs_tol=1e-4) for x, y in zip(g[0].logprobs, a[0].logprobs, strict=True)
            )
    finally:
        sharing.close()
        plain.close()


def test_long_prompts_are_batched_by_tokens_and_cut_to_the_context_window():
    from awctl.models.backends.transformers_backend import TransformersBackend

    reqs = [ChatRequest(messages=[{"role": "user", "content": "ls -la " * k}], max_tokens=4) for k in (2, 3, 60, 400)]
    budget = TransformersBackend("tiny", batch_size=16, max_batch_tokens=200)
    plain = TransformersBackend("tiny", batch_size=1)
    try:
        lengths = dict(enumerate(len(x) for x in budget._encode(
            [budget.tokenizer.apply_chat_template(r.messages, tokenize=False) for r in reqs], 4)))
        chunks = budget._chunks(sorted([(i, 0) for i in lengths], key=lambda m: lengths[m[0]]), lengths)
        assert [[i for i, _ in c] for c in chunks] == [[0, 1], [2], [3]]  # the two short rows share a batch
        assert all(len(c) * max(lengths[i] for i, _ in c) <= 200 for c in chunks if len(c) > 1)
        # batching never changes a greedy completion
        assert [c[0].token_ids for c in budget.generate(reqs)] == [c[0].token_ids for c in plain.generate(reqs)]
        assert budget.truncated_prompts == 0
        budget.lm.config.max_position_embeddings = 64  # a prompt that does not fit keeps its latest tokens
        (done,) = budget.generate([reqs[3]])
        assert budget.truncated_prompts == 1 and len(done[0].token_ids) <= 4
    finally:
        budget.close()
        plain.close()


def test_registered_factories_survive_submodule_imports(fresh_registry):
    import inspect

    import awctl.models.backends.openai_backend  # noqa: F401 - importing binds submodules on the package
    import awctl.models.backends.transformers_backend  # noqa: F401
    import awctl.models.backends.vllm_backend  # noqa: F401

    registry = fresh_registry()
    for name in ("transformers", "vllm", "openai"):
        factory = registry.backend(name).obj
        assert callable(factory) and not inspect.ismodule(factory)
