"""The BrowserGym / WebArena step-log importer: episodes, the pairing of actions with the next page, tabs,
errors, foreign tree layouts kept verbatim, and bad input named by file and line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from awctl_domains.web.codec import WebObservationCodec
from awctl_domains.web.domain import WebDomain
from awctl_domains.web.importers import load_browsergym_steps
from click.testing import CliRunner

from awctl.cli.main import cli
from awctl.domain import run_verifiers
from awctl.errors import InputError
from awctl.trajectory import read_trajectories

FIXTURES = Path(__file__).parent / "fixtures"
DOMAIN = WebDomain()
OBS = WebObservationCodec()


def test_step_logs_become_one_trajectory_per_episode() -> None:
    shop, gitlab = load_browsergym_steps(FIXTURES / "sessions.browsergym.jsonl")
    assert (shop.id, len(shop.turns), gitlab.id, len(gitlab.turns)) == ("webarena.shopping.21", 5,
                                                                        "webarena.gitlab.44", 4)
    assert shop.system.task_description == "Add green tea to the cart."
    first = OBS.parse(shop.system.initial_state)
    assert first.url == "http://127.0.0.1:7770/" and first.bid_of("button", "Search") == "1523"
    # Action t is paired with the page of step t + 1; canonical action text, the source kept when it differs.
    assert shop.turns[2].action == "click('1760')" and shop.turns[2].metadata["source_action"] == 'click("1760")'
    assert OBS.parse(shop.turns[1].observation).url.endswith("?q=green+tea")
    assert OBS.parse(shop.turns[3].observation).error == 'ValueError: Could not find element with bid "9999"'
    tabs = [[(t.url, t.active) for t in OBS.parse(turn.observation).tabs] for turn in gitlab.turns]
    assert tabs[0] == [("http://127.0.0.1:8023/", False), ("about:blank", True)]
    assert tabs[-1] == [("http://127.0.0.1:8023/byteblaze/a11y-syntax-highlighting/-/issues", True)]


def test_imported_browsergym_sessions_pass_every_verifier_that_applies() -> None:
    applied = set()
    for traj in load_browsergym_steps(FIXTURES / "sessions.browsergym.jsonl"):
        for i in range(len(traj.turns)):
            for result in run_verifiers(DOMAIN, traj, i):
                assert result.ok, f"{traj.id} turn {i}: {result.check}: {result.message}"
                applied.add(result.check)
    assert {"fill_shows_value", "navigation_changes_page", "local_edit_scope", "tabs_consistent",
            "target_exists", "message_no_effect", "focus_consistent"} <= applied


def test_foreign_tree_layouts_and_html_are_kept_verbatim_and_verifiers_abstain() -> None:
    (traj,) = load_browsergym_steps(FIXTURES / "native.webarena.json")
    assert traj.id == "webarena.reddit.27" and len(traj.turns) == 2
    assert "[40] RootWebArea 'Forums' focused: True" in traj.turns[0].observation
    assert OBS.parse(traj.turns[0].observation).representation == "text"
    assert OBS.parse(traj.turns[1].observation).representation == "html"
    for i in range(2):  # no BrowserGym tree anywhere in the trajectory: nothing to check
        assert [r.check for r in run_verifiers(DOMAIN, traj, i)] == []


def test_convert_cli_reads_step_logs_with_the_web_importer(tmp_path: Path) -> None:
    out = tmp_path / "web.jsonl"
    result = CliRunner().invoke(cli, ["data", "convert", "--from", "browsergym_steps",
                                      str(FIXTURES / "sessions.browsergym.jsonl"), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert [t.id for t in read_trajectories(out)] == ["webarena.shopping.21", "webarena.gitlab.44"]


@pytest.mark.parametrize("content, fragment", [
    ('{"episode": "e", "action": "noop()", "url": "http://a/"}\n', "step 0: step has no page"),
    ('{"episode": "e", "axtree_txt": "RootWebArea \'A\'"}\nnot json\n', ":2: invalid JSON"),
])
def test_bad_step_logs_name_the_file_and_the_step(tmp_path: Path, content: str, fragment: str) -> None:
    path = tmp_path / "bad.browsergym.jsonl"
    path.write_text(content)
    with pytest.raises(InputError) as err:
        list(load_browsergym_steps(path))
    assert str(path) in str(err.value) and fragment in str(err.value)


def test_json_must_hold_steps(tmp_path: Path) -> None:
    path = tmp_path / "bad.browsergym.json"
    path.write_text(json.dumps({"episodes": 3}))
    with pytest.raises(InputError, match="expected a list of steps"):
        list(load_browsergym_steps(path))
