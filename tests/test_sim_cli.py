"""``awctl simulate batch`` and ``repl`` as real processes on the tiny model."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from awctl.backend import ChatRequest
from awctl.trajectory import SystemPrompt, Trajectory, Turn, write_trajectories


def awctl(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "awctl.cli.main", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "COLUMNS": "120"},
    )


@pytest.fixture(scope="module")
def tiny():
    from awctl.models.backends.transformers_backend import TransformersBackend

    be = TransformersBackend("tiny")
    yield be
    be.close()


def test_batch_replays_awb_rows_teacher_forced(tmp_path, tiny):
    p1, p2 = "### Turn 1\n**Action:**\nls", "### Turn 2\n**Action:**\ncat a.txt"
    r1 = "**Environment Observation:**\na.txt"
    rows = [
        {
            "task": "toy",
            "id": "t1_turn1",
            "prompt": [p1],
            "response": [],
            "current_prompt": p1,
            "system_str": "You simulate a shell.",
            "turn_idx": 1,
            "total_turns": 2,
        },
        {
            "task": "toy",
            "id": "t1_turn2",
            "prompt": [p1, p2],
            "response": [r1],
            "current_prompt": p2,
            "system_str": "You simulate a shell.",
            "turn_idx": 2,
            "total_turns": 2,
        },
    ]
    src = tmp_path / "rows.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "pred.jsonl"
    proc = awctl(
        "simulate",
        "batch",
        str(src),
        "-o",
        str(out),
        "-b",
        "transformers",
        "-m",
        "tiny",
        "--max-tokens",
        "6",
        "--json",
    )
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["format"] == "awb" and summary["predictions"] == 2
    preds = [json.loads(line) for line in out.read_text().splitlines()]
    assert [p["turn"] for p in preds] == [0, 1]
    assert preds[0]["reference"] == r1  # the first turn's recorded observation, from the later row
    expected = [
        [{"role": "system", "content": "You simulate a shell."}, {"role": "user", "content": p1}],
        [
            {"role": "system", "content": "You simulate a shell."},
            {"role": "user", "content": p1},
            {"role": "assistant", "content": r1},
            {"role": "user", "content": p2},
        ],
    ]
    direct = tiny.generate([ChatRequest(messages=m, max_tokens=6) for m in expected])
    assert [p["raw_output"] for p in preds] == [d[0].text for d in direct]
    assert all("diagnostics" in p and "prediction" in p for p in preds)


def test_batch_replays_trajectories_with_limit(tmp_path):
    traj = Trajectory(
        id="a",
        domain="toy",
        system=SystemPrompt(task_description="t", action_space="cmds"),
        turns=[Turn(action=f"echo {i}", observation=str(i)) for i in range(4)],
    )
    src = tmp_path / "t.jsonl"
    write_trajectories(src, [traj])
    out = tmp_path / "p.jsonl"
    proc = awctl(
        "simulate",
        "batch",
        str(src),
        "-o",
        str(out),
        "-m",
        "tiny",
        "--max-tokens",
        "3",
        "--limit",
        "3",
        "--batch-size",
        "2",
    )
    assert proc.returncode == 0, proc.stderr
    preds = [json.loads(line) for line in out.read_text().splitlines()]
    assert [p["id"] for p in preds] == ["a_turn1", "a_turn2", "a_turn3"]
    assert preds[2]["reference"] == "**Environment Observation:**\n2"


def test_batch_bad_input_names_the_line(tmp_path):
    src = tmp_path / "bad.jsonl"
    src.write_text('{"hello": 1}\n')
    proc = awctl("simulate", "batch", str(src), "-o", str(tmp_path / "o.jsonl"), "-m", "tiny")
    assert proc.returncode != 0 and "bad.jsonl:1" in proc.stderr


@pytest.mark.not_a_component("skips only when no domain has perturbations")
def test_repl_steps_switches_perturbation_and_saves(tmp_path):
    from awctl.plugins import get_registry

    domains = get_registry().domains
    name = next(
        (n for n in ("terminal", *sorted(domains)) if n in domains and domains[n].perturbations()), None
    )
    if name is None:
        pytest.skip("no registered domain with perturbations")
    pert = domains[name].perturbations()[0].name
    saved = tmp_path / "episode.jsonl"
    script = (
        "\n".join(
            [
                ":help",
                "ls",
                f":perturb {pert} every=1",
                "echo a \\",
                "b",
                ":perturbations",
                ":perturb off",
                ":history",
                f":save {saved}",
                ":bogus",
                ":quit",
            ]
        )
        + "\n"
    )
    proc = awctl("simulate", "repl", "-d", name, "-m", "tiny", "--max-tokens", "4", stdin=script)
    assert proc.returncode == 0, proc.stderr
    assert "observation 1" in proc.stdout and "observation 2" in proc.stdout
    assert f"perturbed: {pert}" in proc.stdout and "perturbation off" in proc.stdout
    assert "unknown command :bogus" in proc.stdout
    line = json.loads(saved.read_text())
    assert [t["action"] for t in line["turns"]] == ["ls", "echo a \nb"]


def test_simulate_is_listed_and_help_stays_torch_free():
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from awctl.cli.main import main\n"
            "try:\n    main(['simulate', '--help'])\nexcept SystemExit:\n    pass\n"
            "print('TORCH' if 'torch' in sys.modules else 'NO_TORCH')",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "repl" in proc.stdout and "batch" in proc.stdout and "serve" in proc.stdout
    assert proc.stdout.strip().endswith("NO_TORCH")
