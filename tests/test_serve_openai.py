"""``awctl simulate serve`` as an OpenAI-compatible server: the official ``openai`` client (streaming and
not), our ``openai`` backend, and error answers — against a real server process on a tiny model."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from awctl.backend import ChatRequest
from awctl.plugins import build_backend
from awctl.sim.launch import ServerProcess


@pytest.fixture(scope="module")
def server():
    with ServerProcess.awctl_serve(
        "-b", "transformers", "-m", "tiny", "--served-model-name", "tiny-sim", "--default-max-tokens", "16"
    ) as srv:
        yield srv


def post(url: str, body: dict) -> tuple[int, dict]:
    req = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_openai_client_non_streaming(server):
    openai = pytest.importorskip("openai")
    client = openai.OpenAI(base_url=server.url + "/v1", api_key="unused")
    assert [m.id for m in client.models.list().data] == ["tiny-sim"]
    resp = client.chat.completions.create(
        model="tiny-sim",
        messages=[{"role": "system", "content": "sim"}, {"role": "user", "content": "ls"}],
        max_tokens=6,
        temperature=0.0,
    )
    assert resp.object == "chat.completion" and resp.model == "tiny-sim"
    choice = resp.choices[0]
    assert choice.message.role == "assistant" and isinstance(choice.message.content, str)
    assert choice.finish_reason in ("stop", "length")
    assert 1 <= resp.usage.completion_tokens <= 6 and resp.usage.prompt_tokens > 0
    again = client.chat.completions.create(
        model="tiny-sim", messages=[{"role": "user", "content": "ls"}], max_tokens=6, temperature=0.0
    )
    same = client.chat.completions.create(
        model="tiny-sim", messages=[{"role": "user", "content": "ls"}], max_tokens=6, temperature=0.0
    )
    assert again.choices[0].message.content == same.choices[0].message.content


def test_openai_client_streaming_reassembles_the_same_text(server):
    openai = pytest.importorskip("openai")
    client = openai.OpenAI(base_url=server.url + "/v1", api_key="unused")
    msgs = [{"role": "user", "content": "cat notes.txt"}]
    full = client.chat.completions.create(model="tiny-sim", messages=msgs, max_tokens=10, temperature=0.0)
    stream = client.chat.completions.create(
        model="tiny-sim",
        messages=msgs,
        max_tokens=10,
        temperature=0.0,
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    assert all(c.object == "chat.completion.chunk" for c in chunks)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == full.choices[0].message.content
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
    assert finishes == [full.choices[0].finish_reason]
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens == full.usage.completion_tokens


def test_raw_sse_ends_with_done(server):
    req = urllib.request.Request(
        server.url + "/v1/chat/completions",
        data=json.dumps(
            {"messages": [{"role": "user", "content": "x"}], "max_tokens": 3, "stream": True}
        ).encode(),
    )
    with urllib.request.urlopen(req, timeout=60) as resp:
        assert resp.headers["Content-Type"].startswith("text/event-stream")
        events = [line for line in resp.read().decode().split("\n\n") if line]
    assert events[-1] == "data: [DONE]"
    assert all(e.startswith("data: ") for e in events)


def test_n_logprobs_and_text_parts(server):
    status, body = post(
        server.url + "/v1/chat/completions",
        {
            "model": "tiny-sim",
            "messages": [{"role": "user", "content": [{"type": "text", "text": "ls"}]}],
            "max_tokens": 4,
            "temperature": 1.0,
            "n": 3,
            "seed": 5,
            "logprobs": True,
        },
    )
    assert status == 200
    assert [c["index"] for c in body["choices"]] == [0, 1, 2]
    lp = body["choices"][0]["logprobs"]["content"]
    assert lp and all(t["logprob"] <= 0 and isinstance(t["token"], str) for t in lp)


def test_errors_are_openai_shaped(server):
    status, body = post(
        server.url + "/v1/chat/completions",
        {"model": "other", "messages": [{"role": "user", "content": "x"}]},
    )
    assert status == 404 and "tiny-sim" in body["error"]["message"]
    status, body = post(server.url + "/v1/chat/completions", {"messages": []})
    assert status == 400 and body["error"]["param"] == "messages"
    status, body = post(
        server.url + "/v1/chat/completions",
        {"messages": [{"role": "user", "content": "x"}], "temperature": "hot"},
    )
    assert status == 400 and body["error"]["param"] == "temperature"
    status, body = post(
        server.url + "/v1/chat/completions", {"messages": [{"role": "robot", "content": "x"}]}
    )
    assert status == 400 and "role" in body["error"]["message"]


def test_openai_backend_against_the_server(server):
    be = build_backend("openai", base_url=server.url + "/v1", concurrency=4)
    assert be.model == "tiny-sim"
    reqs = [
        ChatRequest(messages=[{"role": "user", "content": f"echo {i}"}], max_tokens=5, logprobs=True)
        for i in range(6)
    ]
    out = be.generate(reqs)
    assert len(out) == 6 and all(len(o) == 1 for o in out)
    assert all(o[0].logprobs and len(o[0].logprobs) == o[0].completion_tokens for o in out)
    local = build_backend("transformers", model="tiny")
    try:
        direct = local.generate(reqs[:2])
    finally:
        local.close()
    assert [o[0].text for o in out[:2]] == [d[0].text for d in direct]
    health = json.loads(urllib.request.urlopen(server.url + "/health", timeout=10).read())
    assert health["status"] == "ok" and health["requests"] >= 6
