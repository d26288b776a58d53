"""Task suites: reference solutions pass on the real servers; wrong or missing solutions fail."""

from __future__ import annotations

import pytest
from awctl_domains.mcp.domain import McpDomain
from awctl_domains.mcp.env import McpEnv
from awctl_domains.mcp.tasks import SUITES, call, tasks_for

from awctl.domain import Task

DOMAIN = McpDomain()
ALL = tasks_for("all")


def _run(env: McpEnv, task: Task, actions: list[str]) -> bool:
    env.reset(task)
    for action in actions:
        env.step(action)
    return task.check(env).ok


def test_suites_have_at_least_twenty_well_formed_tasks() -> None:
    assert len(ALL) >= 20
    assert len({t.id for t in ALL}) == len(ALL)
    assert {t.suite for t in ALL} == set(SUITES)
    for task in ALL:
        assert task.domain == "mcp" and task.solution and task.instruction
        assert task.setup["server"][:2] == ["python", "-m"] and "data" in task.setup
        for action in task.solution:  # solutions are canonical actions
            assert DOMAIN.action_codec.render(DOMAIN.action_codec.parse(action)) == action
    assert DOMAIN.tasks("nope") == []


WRONG = {
    "mcp/notes/create-meeting-note": [
        call("write_note", {"path": "meetings/2026-03-02.md", "content": "Attendees: ana, bo"})
    ],
    "mcp/shop/order-mugs": [
        call("create_order", {"customer": "cleo", "items": [{"sku": "MUG-1", "qty": 2}]})
    ],
    "mcp/calendar/book-interview": [
        call("create_event", {"title": "Interview", "date": "2026-03-02", "start": "13:00", "end": "13:45"})
    ],
}


@pytest.fixture(scope="module")
def env():
    with McpEnv() as e:
        yield e


@pytest.mark.parametrize("task_id", sorted(WRONG))
def test_reference_passes_and_a_plausible_wrong_solution_fails(env: McpEnv, task_id: str) -> None:
    task = next(t for t in ALL if t.id == task_id)
    assert _run(env, task, task.solution)
    assert not _run(env, task, WRONG[task_id])


@pytest.mark.slow
def test_every_reference_solution_passes_and_doing_nothing_fails(env: McpEnv) -> None:
    for task in ALL:
        assert _run(env, task, task.solution), task.id
        result = task.check(env)  # checking twice must not change the verdict (checkers only read)
        assert result.ok, f"{task.id}: {result.message}"
        assert not _run(env, task, []), f"{task.id} passes without doing anything"
