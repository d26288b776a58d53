"""Verifiers on sessions recorded in the real browser: no false positives, and each catches its planted fault.

The module records, once, a scripted session that uses every kind of action (links, forms, fill, select,
hover, focus, clear, keys, scroll, history, tabs, errors, messages) and three tasks' reference solutions
through the recorder, then runs every verifier on every turn and plants every fault.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest
from awctl_domains.web.codec import WebObservation, WebObservationCodec
from awctl_domains.web.domain import WebDomain
from awctl_domains.web.tasks import SHOP

from awctl.domain import TurnContext, run_verifiers
from awctl.record import record_episode, scripted_policy
from awctl.trajectory import Trajectory, Turn

DOMAIN = WebDomain()
OBS = WebObservationCodec()
VERIFIERS = {v.name: v for v in DOMAIN.verifiers()}
Step = Callable[[WebObservation], str]


def on(role: str, name: str, template: str) -> Step:
    """A step acting on the element ``role name`` of the current page: ``template`` gets its bid as {b}."""
    return lambda obs: template.format(b=repr(obs.bid_of(role, name)))


SHOP_SESSION: list[Step | str] = [
    on("searchbox", "Search products", "fill({b}, 'mug')"),
    on("searchbox", "Search products", "press({b}, 'Enter')"),
    on("link", "Ceramic mug", "click({b})"),
    on("spinbutton", "Quantity", "fill({b}, '3')"),
    on("combobox", "Rating", "select_option({b}, '3 stars')"),
    on("textbox", "Your name", "fill({b}, 'Lee')"),
    on("textbox", "Your name", "clear({b})"),
    on("button", "Add to cart", "hover({b})"),
    on("textbox", "Review", "focus({b})"),
    "keyboard_type('Nice mug')",
    "keyboard_press('Shift+Tab')",
    "scroll(0, 300)",
    on("button", "Add to cart", "click({b})"),
    "go_back()",
    "go_forward()",
    "send_msg_to_user('Three mugs are in the cart.')",
    "click('9999')",
    "goto('http://example.com/')",
    "new_tab()",
    "goto('http://tracker.test/labels')",
    "tab_focus(0)",
    "tab_focus(1)",
    on("heading", "Labels", "dblclick({b})"),
    "mouse_click(5, 5)",
    lambda obs: f"fill({obs.bid_of('textbox', 'Label name')!r}, 'infra')\nclick({obs.bid_of('button', 'Create label')!r})",
    "tab_close()",
    "noop(100)",
    "goto('http://tracker.test/issues/2')",
    on("checkbox", "docs", "click({b})"),
    on("combobox", "Assignee", "select_option({b}, 'carol')"),
    on("button", "Save changes", "click({b})"),
    on("link", "Labels", "click({b})"),
    "go_back()",
    "report_infeasible('The tracker cannot merge issues.')",
]


def record_session(env: Any, start: str, steps: list[Step | str]) -> Trajectory:
    initial = env.reset(DOMAIN.tasks("all")[0].__class__(
        id="web/test/session", domain="web", suite="test", instruction="Explore the apps.", solution=[],
        check=lambda e: None, setup={"start": start}))  # type: ignore[arg-type,return-value]
    obs, turns = OBS.parse(initial), []
    for step in steps:
        action = step if isinstance(step, str) else step(obs)
        text = env.step(action).observation
        turns.append(Turn(action=action, observation=text))
        obs = OBS.parse(text)
    return Trajectory(id=f"session-{start}", domain="web", system=DOMAIN.sections_for(None, initial), turns=turns)


@pytest.fixture(scope="module")
def recorded(web_env: Any) -> list[Trajectory]:
    out = [record_session(web_env, SHOP, SHOP_SESSION)]
    tasks = {t.id: t for t in DOMAIN.tasks("all")}
    for task_id in ("web/tracker/add_ui_label", "web/cross/report_damaged_order", "web/shop/checkout_express_coupon"):
        traj = record_episode(DOMAIN, web_env, tasks[task_id], scripted_policy)
        assert traj.metadata["check"]["ok"], traj.metadata["check"]
        out.append(traj)
    return out


def test_the_session_used_every_kind_of_turn(recorded: list[Trajectory]) -> None:
    session = recorded[0]
    errors = [OBS.parse(t.observation).error for t in session.turns]
    assert errors.count(None) == len(errors) - 2  # the unknown bid and the blocked host
    names = {DOMAIN.action_codec.family(t.action) for t in session.turns}
    assert {"fill", "press", "click", "select_option", "clear", "hover", "focus", "keyboard_type", "go_back",
            "go_forward", "new_tab", "tab_focus", "tab_close", "send_msg_to_user", "multi"} <= names


def test_every_verifier_passes_every_recorded_turn(recorded: list[Trajectory]) -> None:
    applied: dict[str, int] = {}
    for traj in recorded:
        for i in range(len(traj.turns)):
            for result in run_verifiers(DOMAIN, traj, i):
                assert result.ok, f"{traj.id} turn {i} ({traj.turns[i].action}): {result.check}: {result.message}"
                applied[result.check] = applied.get(result.check, 0) + 1
    assert set(applied) == set(VERIFIERS), f"never applied: {set(VERIFIERS) - set(applied)}"


@pytest.mark.parametrize("fault", DOMAIN.faults(), ids=lambda f: f.name)
def test_each_planted_fault_is_caught_by_its_verifier(recorded: list[Trajectory], fault: Any) -> None:
    rng = random.Random(fault.name)
    planted = caught = 0
    for traj in recorded:
        for i in range(len(traj.turns)):
            bad = fault.plant(TurnContext.at(traj, i), rng)
            if bad is None or bad == traj.turns[i].observation:
                continue
            planted += 1
            result = VERIFIERS[fault.verifier](TurnContext.at(traj, i, bad))
            assert result is not None and not result.ok, (
                f"{fault.name} in {traj.id} turn {i} ({traj.turns[i].action}) not caught by {fault.verifier}: {result}")
            assert result.message
            caught += 1
    assert planted > 0 and caught == planted


def test_every_verifier_has_a_fault() -> None:
    assert {f.verifier for f in DOMAIN.faults()} == set(VERIFIERS)


def test_verifiers_abstain_without_what_they_need() -> None:
    page = "# Open tabs\nTab 0 (active tab):\n    Title: A\n    URL: http://a.test/\n\nRootWebArea 'A', focused"
    traj = Trajectory(id="t", domain="web", turns=[Turn(action="click('5')", observation="<html>A page</html>")])
    results = {r.check: r for r in run_verifiers(DOMAIN, traj, 0)}
    # Nothing before the turn is known and the page is HTML, not a tree: nothing applies.
    assert results == {}
    traj = Trajectory(id="t", domain="web", system=DOMAIN.sections_for(None, page),
                      turns=[Turn(action="click('5')", observation="<html>A page</html>")])
    results = {r.check: r for r in run_verifiers(DOMAIN, traj, 0)}
    assert not results["representation_kept"].ok and "axtree" in results["representation_kept"].message
    # The initial page is a tree, so one is expected here: every check of the page fails, naming what it
    # expected (click('5') on a bid the page does not show changed the page instead of reporting an error).
    for name in ("lines_parse", "indent_step", "unique_bids", "tabs_consistent", "focus_consistent",
                 "header_matches_tree", "target_exists"):
        assert not results[name].ok and "expected a BrowserGym accessibility tree" in results[name].message


def test_random_text_fails_every_verifier_that_passed_the_recorded_turn(recorded: list[Trajectory]) -> None:
    from awctl.conformance.kit import rule_fails_garbage

    outcome = rule_fails_garbage(DOMAIN, recorded, seed=3)
    assert outcome.status == "ok" and outcome.checked > 100, outcome.message


def test_an_error_page_without_a_tree_is_not_judged_as_a_missing_tree() -> None:
    page = "# Open tabs\nTab 0 (active tab):\n    Title: A\n    URL: http://a.test/\n\nRootWebArea 'A', focused"
    error_only = "# Open tabs\nTab 0 (active tab):\n    Title: A\n    URL: http://a.test/\n\n# Last action error\nTimeout"
    traj = Trajectory(id="t", domain="web", system=DOMAIN.sections_for(None, page),
                      turns=[Turn(action="noop()", observation=error_only)])
    results = {r.check: r for r in run_verifiers(DOMAIN, traj, 0)}
    assert all(r.ok for r in results.values()), results


def test_a_failing_verifier_names_the_line(recorded: list[Trajectory]) -> None:
    traj = recorded[0]
    text = traj.turns[0].observation
    lines = text.split("\n")
    k = next(i for i, line in enumerate(lines) if line.startswith("\t"))  # the root's first child
    lines[k] = "\t\t" + lines[k]
    result = VERIFIERS["indent_step"](TurnContext.at(traj, 0, "\n".join(lines)))
    assert not result.ok and result.message.startswith(f"line {k + 1}:")


def test_the_initial_page_is_found_inside_a_prompt_with_other_sections() -> None:
    from awctl_domains.web.verifiers import find_observation

    prompt = ("## Initial State\nThe browser shows:\n```\n# Open tabs\nTab 0 (active tab):\n    Title: A\n"
              "    URL: http://a.test/\n\nRootWebArea 'A', focused\n\t[5] link 'B', url='http://a.test/b'\n```\n\n"
              "## Simulation Instruction\nPredict the page.")
    found = find_observation(prompt)
    assert found is not None and found.url == "http://a.test/" and found.bid_of("link", "B") == "5"


def test_a_tree_in_another_layout_fails_lines_parse_only_where_the_trajectory_shows_real_trees() -> None:
    tree = "RootWebArea 'Shop', focused\n\t[5] link 'Cart', url='http://a.test/cart'"
    other = "RootWebArea 'Shop'\n\tlink [5] 'Cart'"
    established = Trajectory(id="t", domain="web", system=DOMAIN.sections_for(None, tree),
                             turns=[Turn(action="noop()", observation=other)])
    result = VERIFIERS["lines_parse"](TurnContext.at(established, 0))
    assert not result.ok and result.message.startswith("line 2: not an accessibility-tree node")
    foreign = Trajectory(id="t", domain="web", turns=[Turn(action="click [5]", observation=other)] * 2)
    assert [r.check for r in run_verifiers(DOMAIN, foreign, 1)] == []  # nothing established: all abstain
