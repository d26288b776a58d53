"""Every basic task on the real desktop: the reference solution passes its checker, doing nothing fails it."""

from __future__ import annotations

import pytest
from awctl_domains.os.domain import OsDomain

from .conftest import require_desktop

TASKS = OsDomain().tasks("basic")


def test_the_suite_has_at_least_fifteen_tasks_in_both_action_forms() -> None:
    assert len(TASKS) >= 15 and len({t.id for t in TASKS}) == len(TASKS)
    forms = {OsDomain().action_codec.parse(a).form for t in TASKS for a in t.solution}
    assert forms == {"code", "computer_13", "special"}
    assert {a for t in TASKS for a in t.setup.get("apps", []) if isinstance(a, str)} >= {"galculator", "mousepad"}


@pytest.mark.slow
def test_every_reference_solution_passes_its_checker(recorded_xml) -> None:  # type: ignore[no-untyped-def]
    verdicts = {t.metadata["task"]: t.metadata["check"] for t in recorded_xml}
    assert set(verdicts) == {t.id for t in TASKS}
    failed = {k: v["message"] for k, v in verdicts.items() if not v["ok"]}
    assert not failed


@pytest.mark.slow
@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.id.rsplit("/", 1)[-1])
def test_doing_nothing_fails_the_checker(task) -> None:  # type: ignore[no-untyped-def]
    require_desktop()
    env = OsDomain().real_env({})
    assert env is not None
    with env:
        env.reset(task)
        verdict = task.check(env)
    assert not verdict.ok, verdict.message
