"""Task suite: reference solutions pass in the real env, wrong ones fail, checkers use only env.step."""

from __future__ import annotations

import pytest
from awctl_domains.search.codec import SearchActionCodec, SearchObservationCodec
from awctl_domains.search.env import SearchEnv
from awctl_domains.search.tasks import memory, tasks_for

from awctl.domain import Task
from awctl.env import Environment, StepResult

ALL = tasks_for("all")
A, OBS = SearchActionCodec(), SearchObservationCodec()


class StepOnly(Environment):
    """Exposes a real env through reset/step alone, as a simulator would; counts checker steps."""

    domain = "search"

    def __init__(self) -> None:
        self._env = SearchEnv()
        self.steps = 0

    def reset(self, task: Task | None = None, seed: int | None = None) -> str:
        return self._env.reset(task, seed)

    def step(self, action: str) -> StepResult:
        self.steps += 1
        return self._env.step(action)


def test_suites_have_enough_distinct_tasks() -> None:
    assert len(ALL) >= 20
    assert len({t.id for t in ALL}) == len(ALL)
    assert {t.suite for t in ALL} == {"facts", "lookup", "memory"}
    assert tasks_for("nope") == []


@pytest.mark.parametrize("task", ALL, ids=lambda t: t.id)
def test_reference_solution_passes_in_the_real_env_and_empty_episode_fails(task: Task) -> None:
    env = StepOnly()
    env.reset(task)
    for action in task.solution:
        A.parse(action)  # reference actions are valid canonical actions
        assert not env.step(action).observation.startswith("Error:"), action
    before = env.steps
    result = task.check(env)
    assert result.ok, result.message
    assert env.steps > before  # the checker asked through step
    env.reset(task)
    assert not task.check(env).ok


@pytest.mark.parametrize("task", tasks_for("facts"), ids=lambda t: t.id)
def test_fact_answers_are_on_the_page_the_search_finds(task: Task) -> None:
    env = SearchEnv()
    env.reset(task)
    found = OBS.parse(env.step(task.solution[0]).observation)
    url = A.parse(task.solution[1]).arguments["url"]
    assert url in [r.url for r in found.blocks[0].results]
    page = OBS.parse(env.step(task.solution[1]).observation)
    answer = A.parse(task.solution[2]).arguments["value"]
    assert " ".join(answer.split()).casefold() in " ".join(page.body.split()).casefold()


def test_lookup_answers_match_what_the_env_shows() -> None:
    env = SearchEnv()
    for task in tasks_for("lookup"):
        env.reset(task)
        shown = [OBS.parse(env.step(a).observation) for a in task.solution]
        stored = [A.parse(a).arguments["value"] for a in task.solution if A.parse(a).name == "memory"]
        if "title-" in task.id:
            assert shown[0].title == stored[0]
        else:
            firsts = [b.results[0].url for b in shown[0].blocks]
            assert firsts == stored


@pytest.mark.parametrize(
    ("task_id", "wrong"),
    [
        ("search/facts/assert-exception", [memory("set", "answer", "ValueError")]),
        ("search/lookup/title-bisect", [memory("set", "title", "bisect")]),
        (
            "search/lookup/top-textwrap",
            [memory("set", "top_url", "https://docs.python.org/3.11/library/re.html")],
        ),
        ("search/memory/update-value", [memory("set", "status", "draft")]),
        ("search/memory/delete-scratch", [memory("set", "scratch", "x"), memory("set", "note", "keep me")]),
        (
            "search/memory/remember-two",
            [
                memory("set", "codename", "heron"),
                memory("set", "release", "2.1"),
                memory("set", "extra", "1"),
            ],
        ),
    ],
)
def test_wrong_solutions_fail(task_id: str, wrong: list[str]) -> None:
    task = next(t for t in ALL if t.id == task_id)
    env = StepOnly()
    env.reset(task)
    for action in wrong:
        env.step(action)
    result = task.check(env)
    assert not result.ok and result.message
