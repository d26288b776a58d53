"""Verifiers and faults on trajectories built from OSWorld-layout samples (no desktop needed), and on
trajectories recorded on the real desktop (no false positives; every planted fault caught)."""

from __future__ import annotations

import copy
import random
from pathlib import Path

import pytest
from awctl_domains.os.a11y import (
    UBUNTU_NS,
    A11yObservation,
    Node,
    linearize,
    parse_observation,
    render_observation,
)
from awctl_domains.os.domain import OsDomain
from awctl_domains.os.verifiers import VERIFIERS, initial_observation, screen_size

from awctl.domain import TurnContext, run_verifiers
from awctl.trajectory import SystemPrompt, Trajectory, Turn, read_trajectories

FIXTURES = Path(__file__).parent / "fixtures"
ST, CP = UBUNTU_NS["st"], UBUNTU_NS["cp"]
DOMAIN = OsDomain()
BY_NAME = {v.name: v for v in VERIFIERS}


def base() -> A11yObservation:
    return parse_observation((FIXTURES / "osworld_ubuntu.xml").read_text())


def render(obs: A11yObservation) -> str:
    return render_observation(A11yObservation("xml", tree=obs.tree))


def find(obs: A11yObservation, tag: str, name: str | None = None) -> Node:
    return next(n for n in obs.tree.iter() if n.tag == tag and (name is None or n.name == name))  # type: ignore[union-attr]


def system(initial: str, screen: str = "The desktop has a 1920x1080 screen.") -> SystemPrompt:
    return SystemPrompt(task_description="edit the list", initial_state=f"{screen}\n```xml\n{initial}\n```")


def typed_turn() -> tuple[str, str]:
    after = base()
    text = find(after, "text")
    text.text = (text.text or "") + "\n- apples"
    find(after, "frame").attrib["name"] = "*notes.txt (~/Documents) - gedit"
    return "```python\npyautogui.write('\\n- apples')\n```", render(after)


def closed_turn() -> tuple[str, str]:
    after = base()
    after.tree.children = [a for a in after.tree.children if a.name != "gedit"]  # type: ignore[union-attr]
    terminal = find(after, "frame", "user@ubuntu: ~")
    terminal.attrib[f"{{{ST}}}active"] = "true"
    return '{"action_type": "HOTKEY", "parameters": {"keys": ["alt", "f4"]}}', render(after)


def trajectory() -> Trajectory:
    start = render(base())
    t1 = typed_turn()
    t2 = closed_turn()
    return Trajectory(id="synthetic", domain="os", system=system(start),
                      turns=[Turn(action=t1[0], observation=t1[1]), Turn(action=t2[0], observation=t2[1])])


def results(traj: Trajectory, index: int, observation: str | None = None) -> dict[str, bool]:
    return {r.check: r.ok for r in run_verifiers(DOMAIN, traj, index, observation)}


def test_the_trajectory_states_screen_and_initial_tree() -> None:
    traj = trajectory()
    assert screen_size(traj.system) == (1920, 1080)
    assert screen_size(SystemPrompt(raw="OSWorld: screen resolution 1280 x 720, Ubuntu 22.04")) == (1280, 720)
    assert screen_size(SystemPrompt(initial_state="no size here")) is None
    start = initial_observation(traj.system)
    assert start is not None and start.kind == "xml" and len(start.tree.children) == 3  # type: ignore[union-attr]


def test_real_looking_turns_pass_every_applicable_verifier() -> None:
    traj = trajectory()
    first, second = results(traj, 0), results(traj, 1)
    assert first == {"xml_namespaces": True, "representation_kept": True, "elements_on_screen": True,
                     "one_active_window": True, "typed_text_in_focus": True}
    assert second == {"xml_namespaces": True, "representation_kept": True, "elements_on_screen": True,
                      "one_active_window": True, "closed_window_gone": True}


def test_verifiers_abstain_without_what_they_need() -> None:
    traj = trajectory()
    bare = traj.model_copy(update={"system": SystemPrompt(task_description="no initial state")})
    checks = results(bare, 0)
    assert "elements_on_screen" not in checks and "representation_kept" not in checks
    assert "one_active_window" not in checks
    # Typing with nothing focused: nothing to hold the text to.
    unfocused = base()
    del find(unfocused, "text").attrib[f"{{{ST}}}focused"]
    no_focus = traj.model_copy(update={"system": system(render(unfocused))})
    assert "typed_text_in_focus" not in results(no_focus, 0)


def test_a_save_dialog_instead_of_closing_is_accepted() -> None:
    traj = trajectory()
    asking = base()
    gedit = next(a for a in asking.tree.children if a.name == "gedit")  # type: ignore[union-attr]
    del gedit.children[0].attrib[f"{{{ST}}}active"]
    gedit.children.append(Node("alert", {"name": "Question", f"{{{ST}}}active": "true", f"{{{ST}}}showing": "true",
                                         f"{{{ST}}}visible": "true", f"{{{CP}}}screencoord": "(500, 400)",
                                         f"{{{CP}}}size": "(400, 150)"}))
    res = run_verifiers(DOMAIN, traj, 1, render(asking))
    assert {r.check: r.ok for r in res}["closed_window_gone"]


@pytest.mark.parametrize("fault", DOMAIN.faults(), ids=lambda f: f.name)
def test_each_fault_is_caught_by_its_verifier_on_samples(fault) -> None:  # type: ignore[no-untyped-def]
    traj = trajectory()
    table_traj = table_trajectory()
    planted = 0
    for t in (traj, table_traj):
        for i in range(len(t.turns)):
            ctx = TurnContext.at(t, i)
            bad = fault.plant(ctx, random.Random(i))
            if bad is None:
                continue
            planted += 1
            verdict = BY_NAME[fault.verifier](TurnContext.at(t, i, bad))
            assert verdict is not None and not verdict.ok, (fault.name, i, bad[:300])
            assert verdict.message
    assert planted, f"{fault.name} found no turn to plant into"


def table_trajectory() -> Trajectory:
    start = base()
    table = render_observation(A11yObservation("table", rows=linearize(start.tree)))  # type: ignore[arg-type]
    action, after = typed_turn()
    after_table = render_observation(A11yObservation("table", rows=linearize(parse_observation(after).tree)))  # type: ignore[arg-type]
    return Trajectory(id="table", domain="os",
                      system=SystemPrompt(initial_state=f"A 1920x1080 screen.\n```\n{table}\n```"),
                      turns=[Turn(action=action, observation=after_table)])


def test_table_observations_are_checked_by_their_own_verifiers() -> None:
    checks = results(table_trajectory(), 0)
    assert checks == {"table_columns": True, "representation_kept": True, "elements_on_screen": True}


def test_failures_name_the_element_and_the_expectation() -> None:
    traj = trajectory()
    lost = parse_observation(traj.turns[0].observation)
    find(lost, "text").text = "Shopping list:"
    verdict = BY_NAME["typed_text_in_focus"](TurnContext.at(traj, 0, render(lost)))
    assert verdict is not None and not verdict.ok
    assert "typed '\\n- apples'" in verdict.message and "gedit" in verdict.message
    moved = copy.deepcopy(parse_observation(traj.turns[0].observation))
    frame = find(moved, "frame", "user@ubuntu: ~")
    for node in frame.iter():
        if node.position(CP):
            x, y = node.position(CP)  # type: ignore[misc]
            node.attrib[f"{{{CP}}}screencoord"] = f"({int(x) + 2000}, {int(y)})"
    verdict = BY_NAME["elements_on_screen"](TurnContext.at(traj, 0, render(moved)))
    assert verdict is not None and not verdict.ok and "outside the 1920x1080 screen" in verdict.message
    assert "user@ubuntu: ~" in verdict.message


# ── real desktop recordings ──────────────────────────────────────────────────────────────────────────


def _summary(trajectories: list[Trajectory]) -> dict[str, dict[str, int]]:
    counts: dict[str, dict[str, int]] = {}
    for traj in trajectories:
        for i in range(len(traj.turns)):
            for res in run_verifiers(DOMAIN, traj, i):
                c = counts.setdefault(res.check, {"passed": 0, "failed": 0})
                c["passed" if res.ok else "failed"] += 1
                assert res.ok, (traj.id, i, res.check, res.message)
    return counts


@pytest.mark.slow
def test_recorded_desktop_trajectories_pass_every_verifier(recorded_xml, recorded_table) -> None:  # type: ignore[no-untyped-def]
    counts = _summary([*recorded_xml, *recorded_table])
    # Every verifier had something to check in the recordings.
    assert {name for name, c in counts.items() if c["passed"]} == set(BY_NAME)


@pytest.mark.slow
@pytest.mark.parametrize("fault", DOMAIN.faults(), ids=lambda f: f.name)
def test_each_fault_planted_in_recordings_is_caught(fault, recorded_xml, recorded_table) -> None:  # type: ignore[no-untyped-def]
    planted = 0
    for traj in [*recorded_xml, *recorded_table]:
        for i in range(len(traj.turns)):
            bad = fault.plant(TurnContext.at(traj, i), random.Random(i))
            if bad is None:
                continue
            planted += 1
            verdict = BY_NAME[fault.verifier](TurnContext.at(traj, i, bad))
            assert verdict is not None and not verdict.ok, (fault.name, traj.id, i)
    assert planted, f"{fault.name}: no recorded turn to plant into"


def test_a_heading_keeps_its_label_while_its_value_changes() -> None:
    xml = render(base())
    traj = Trajectory(id="h", domain="os",
                      system=SystemPrompt(initial_state=f"A 1920x1080 screen.\n```\nActive window: gedit\n{xml}\n```"),
                      turns=[Turn(action="WAIT", observation=f"Active window: gnome-terminal\n{xml}")])
    assert results(traj, 0)["representation_kept"]
    other = BY_NAME["representation_kept"](TurnContext.at(traj, 0, f"Focused: text\n{xml}"))
    assert other is not None and not other.ok and "Focused" in other.message


# ── random text earns no verifier credit ─────────────────────────────────────────────────────────────


def test_random_text_fails_every_verifier_that_passed_the_turn() -> None:
    from awctl.conformance.kit import rule_fails_garbage

    recorded_tables = list(read_trajectories(FIXTURES / "desktop_table.jsonl"))
    outcome = rule_fails_garbage(DOMAIN, [trajectory(), table_trajectory(), *recorded_tables], seed=5)
    assert outcome.status == "ok" and outcome.checked >= 40, outcome.message


def test_prose_instead_of_a_tree_names_the_form_the_trajectory_shows() -> None:
    traj, table = trajectory(), table_trajectory()
    for t, form in ((traj, "OSWorld's XML accessibility tree"), (table, "linearized accessibility table")):
        for res in run_verifiers(DOMAIN, t, 0, "The editor now shows the new line."):
            assert not res.ok and (form in res.message or "not an accessibility tree" in res.message), res
    # Nothing established (no tree in the prompt, none before): nothing to expect.
    bare = Trajectory(id="b", domain="os", turns=[Turn(action="WAIT", observation="a desktop")])
    assert run_verifiers(DOMAIN, bare, 0) == []


def test_the_initial_tree_is_read_past_a_childs_self_closing_tag() -> None:
    xml = render(base())
    assert "/><" in xml  # children written self-closing, as OSWorld writes them
    start = initial_observation(SystemPrompt(raw=f"## Initial State\nscreen resolution 1920x1080.\n{xml}\n\n## Task"))
    assert start is not None and len(start.tree.children) == 3  # type: ignore[union-attr]


@pytest.mark.slow
def test_random_text_fails_every_verifier_on_desktop_recordings(recorded_xml, recorded_table) -> None:  # type: ignore[no-untyped-def]
    from awctl.conformance.kit import rule_fails_garbage

    outcome = rule_fails_garbage(DOMAIN, [*recorded_xml, *recorded_table], seed=1)
    assert outcome.status == "ok", outcome.message


def test_recorded_table_fixture_exercises_the_table_checks() -> None:
    trajs = list(read_trajectories(FIXTURES / "desktop_table.jsonl"))
    assert trajs and all(parse_observation(t.turns[0].observation).kind == "table" for t in trajs)
    counts = _summary(trajs)
    assert counts["table_columns"]["passed"] == sum(len(t.turns) for t in trajs)
