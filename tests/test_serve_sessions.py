"""The environment-session API of ``awctl simulate serve`` against a real server on a tiny model."""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request

import pytest

from awctl.sim.launch import ServerProcess


def pick_domain() -> str:
    from awctl.plugins import get_registry

    names = sorted(get_registry().domains)
    if not names:
        pytest.skip("no domain is registered")
    return "terminal" if "terminal" in names else names[0]


@pytest.fixture(scope="module")
def server():
    with ServerProcess.awctl_serve(
        "-b",
        "transformers",
        "-m",
        "tiny",
        "--session-timeout",
        "30",
        "--batch-window-ms",
        "20",
        "-S",
        "max_tokens=4",
        "-S",
        "max_history_turns=2",
    ) as srv:
        yield srv


def call(method: str, url: str, body: dict | None = None) -> tuple[int, dict]:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=120) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_create_step_list_close(server):
    domain = pick_domain()
    status, created = call(
        "POST",
        server.url + "/v1/sessions",
        {"domain": domain, "instruction": "Count the files.", "options": {"max_turns": 2}},
    )
    assert status == 201 and created["domain"] == domain and isinstance(created["observation"], str)
    sid = created["session_id"]
    status, step = call("POST", f"{server.url}/v1/sessions/{sid}/step", {"action": "ls"})
    assert status == 200 and step["done"] is False and step["info"]["turn"] == 0
    assert {"diagnostics", "verifiers", "attempts", "raw"} <= set(step["info"])
    assert step["info"]["usage"]["completion_tokens"] <= 4  # the -S max_tokens=4 default applies
    status, step = call("POST", f"{server.url}/v1/sessions/{sid}/step", {"action": "pwd"})
    assert step["done"] is True and step["info"]["turn"] == 1
    status, listed = call("GET", server.url + "/v1/sessions")
    assert sid in [s["session_id"] for s in listed["data"]]
    assert call("GET", f"{server.url}/v1/sessions/{sid}")[1]["steps"] == 2
    assert call("DELETE", f"{server.url}/v1/sessions/{sid}") == (200, {"session_id": sid, "closed": True})
    status, body = call("POST", f"{server.url}/v1/sessions/{sid}/step", {"action": "ls"})
    assert status == 404 and "no session" in body["error"]["message"]


@pytest.mark.not_a_component("skips only when no domain has perturbations")
def test_perturbation_option_is_applied(server):
    from awctl.plugins import get_domain

    domain = pick_domain()
    perts = get_domain(domain).perturbations()
    if not perts:
        pytest.skip(f"{domain} has no perturbations")
    status, created = call(
        "POST",
        server.url + "/v1/sessions",
        {"domain": domain, "options": {"perturbation": perts[0].name, "perturb_every": 2}},
    )
    assert status == 201
    sid = created["session_id"]
    infos = [
        call("POST", f"{server.url}/v1/sessions/{sid}/step", {"action": "ls"})[1]["info"] for _ in range(2)
    ]
    assert infos[0]["perturbation"] is None and infos[1]["perturbation"]["name"] == perts[0].name
    call("DELETE", f"{server.url}/v1/sessions/{sid}")


def test_bad_requests_name_the_problem(server):
    status, body = call("POST", server.url + "/v1/sessions", {"domain": "no-such-domain"})
    assert status == 404 and body["error"]["param"] == "domain"
    status, body = call(
        "POST", server.url + "/v1/sessions", {"domain": pick_domain(), "options": {"tempo": 1}}
    )
    assert status == 400 and body["error"]["param"] == "options.tempo"
    status, body = call(
        "POST",
        server.url + "/v1/sessions",
        {"domain": pick_domain(), "options": {"perturbation": "no-such-perturbation"}},
    )
    assert status == 400 and "no perturbation" in body["error"]["message"]
    status, body = call("POST", server.url + "/v1/sessions", {"domain": pick_domain(), "seed": "7"})
    assert status == 400 and body["error"]["param"] == "seed"
    status, body = call("POST", server.url + "/v1/sessions", {"domain": pick_domain(), "task_id": "nope"})
    assert status == 404 and body["error"]["param"] == "task_id"
    sid = call("POST", server.url + "/v1/sessions", {"domain": pick_domain()})[1]["session_id"]
    status, body = call("POST", f"{server.url}/v1/sessions/{sid}/step", {"action": 3})
    assert status == 400 and body["error"]["param"] == "action"
    call("DELETE", f"{server.url}/v1/sessions/{sid}")


def test_idle_sessions_time_out(server):
    status, created = call("POST", server.url + "/v1/sessions", {"domain": pick_domain(), "timeout_s": 0.3})
    sid = created["session_id"]
    time.sleep(0.6)
    status, body = call("POST", f"{server.url}/v1/sessions/{sid}/step", {"action": "ls"})
    assert status == 404 and "timed out" in body["error"]["message"]
    assert call("GET", server.url + "/health")[1]["sessions_timed_out"] >= 1


def test_concurrent_sessions_share_batches(server):
    domain = pick_domain()
    sids = [call("POST", server.url + "/v1/sessions", {"domain": domain})[1]["session_id"] for _ in range(12)]
    before = call("GET", server.url + "/health")[1]
    errors: list[str] = []

    def run(sid: str) -> None:
        for k in range(3):
            status, body = call("POST", f"{server.url}/v1/sessions/{sid}/step", {"action": f"echo {k}"})
            if status != 200 or body["info"]["turn"] != k:
                errors.append(f"{sid}: {status} {body}")

    threads = [threading.Thread(target=run, args=(s,)) for s in sids]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    after = call("GET", server.url + "/health")[1]
    assert errors == []
    steps = after["requests"] - before["requests"]
    batches = after["batches"] - before["batches"]
    assert steps == 36 and batches < steps  # concurrent steps were gathered into shared backend calls
    assert after["largest_batch"] > 1
    for sid in sids:
        call("DELETE", f"{server.url}/v1/sessions/{sid}")


@pytest.mark.slow
def test_soak_64_sessions_200_steps(server):
    from awctl.sim.loadtest import run_session_load

    report = run_session_load(
        server.url, pick_domain(), sessions=64, steps=200, options={"max_tokens": 2, "max_history_turns": 1}
    )
    print(json.dumps(report.to_dict()))
    assert report.errors == []
    assert report.steps_ok == 64 * 200
