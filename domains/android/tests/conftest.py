"""Fixtures for the android tests: an ``adb`` stand-in first on PATH that replays device transcripts."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from awctl_domains.android import standin

TRANSCRIPTS = Path(standin.__file__).parent / "fixtures" / "transcripts"
FIXTURES = Path(__file__).parent / "fixtures"


@dataclass
class StandIn:
    """The installed stand-in: pick a transcript (fresh device state) and read the command log."""

    root: Path

    def use(self, transcript: str | Path | dict[str, Any]) -> Path:
        """Replay ``transcript`` (a name under fixtures/transcripts, a path, or a dict written to a file)."""
        if isinstance(transcript, dict):
            path = self.root / "custom.json"
            path.write_text(json.dumps(transcript))
        elif isinstance(transcript, Path):
            path = transcript
        else:
            path = TRANSCRIPTS / f"{transcript}.json"
        os.environ["ADB_STANDIN_TRANSCRIPT"] = str(path)
        for name in ("state.json", "log.jsonl"):
            (self.root / name).unlink(missing_ok=True)
        return path

    def log(self) -> list[dict[str, Any]]:
        path = self.root / "log.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []

    def commands(self) -> list[str]:
        return [entry["command"] for entry in self.log()]


def _install(root: Path, mp: pytest.MonkeyPatch) -> StandIn:
    standin.install(root / "bin")
    mp.setenv("PATH", f"{root / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}")
    mp.setenv("ADB_STANDIN_STATE", str(root / "state.json"))
    mp.setenv("ADB_STANDIN_LOG", str(root / "log.jsonl"))
    mp.setenv("ADB_STANDIN_TRANSCRIPT", str(TRANSCRIPTS / "settings.json"))
    return StandIn(root)


@pytest.fixture
def adb(tmp_path: Path) -> Iterator[StandIn]:
    """The stand-in on PATH for one test."""
    with pytest.MonkeyPatch.context() as mp:
        yield _install(tmp_path, mp)


def fast_env(**overrides: Any) -> Any:
    """An AdbEnv that does not pause (the stand-in answers at once)."""
    from awctl_domains.android.env import AdbEnv

    return AdbEnv({"settle_s": 0, "wait_s": 0, **overrides})


@pytest.fixture(scope="session")
def make_env() -> Any:
    """:func:`fast_env` as a fixture."""
    return fast_env


@dataclass
class Episode:
    """One episode recorded through the stand-in: the trajectory and the task checker's verdict."""

    name: str
    trajectory: Any
    verdict: Any = None


def record_episode(adb: StandIn, name: str, task: Any, actions: list[str], representation: str = "elements",
                   check: bool = False) -> Episode:
    """Reset the stand-in device for ``task``, run ``actions`` through an AdbEnv, and build the trajectory
    the recorder would (sections from the domain, one turn per action)."""
    from awctl_domains.android.domain import AndroidDomain

    from awctl.trajectory import Trajectory, Turn

    adb.use(task.setup["transcript"])
    env = fast_env(representation=representation)
    first = env.reset(task)
    turns = [Turn(action=a, observation=env.step(a).observation) for a in actions]
    verdict = task.check(env) if check else None
    trajectory = Trajectory(id=name, domain="android", source="adb-standin",
                            system=AndroidDomain().sections_for(task, first), turns=turns)
    return Episode(name, trajectory, verdict)


@pytest.fixture(scope="session")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Episode]]:
    """Episodes recorded through the stand-in once per session: every task's reference solution (element
    lists; three also as dumps), every task with no action (its checker must fail), and exploratory
    sessions with disabled taps, a missing index, answers and status."""
    from awctl_domains.android.tasks import BASIC, act

    out: dict[str, Episode] = {}
    with pytest.MonkeyPatch.context() as mp:
        adb = _install(tmp_path_factory.mktemp("recorded"), mp)
        by_name = {t.id.rsplit("/", 1)[1]: t for t in BASIC}
        for name, task in by_name.items():
            out[name] = record_episode(adb, name, task, task.solution, check=True)
            out[f"{name}/noop"] = record_episode(adb, f"{name}/noop", task, [], check=True)
        for name in ("add_note", "delete_note", "open_contact"):
            out[f"{name}/xml"] = record_episode(adb, f"{name}/xml", by_name[name], by_name[name].solution, "xml")
        airplane = [act("click", index=10), act("click", index=7), act("click", index=99),
                    act("answer", text="Airplane mode is on."), act("status", goal_status="complete")]
        for representation in ("elements", "xml"):
            out[f"explore_settings/{representation}"] = record_episode(
                adb, f"explore_settings/{representation}", by_name["airplane_mode_on"], airplane, representation)
        notes = [act("open_app", app_name="Notes"), act("click", index=2), act("click", index=2),
                 act("input_text", text="Buy milk", index=3), act("click", index=2), act("wait"),
                 act("unknown")]
        for representation in ("elements", "xml"):
            out[f"explore_notes/{representation}"] = record_episode(
                adb, f"explore_notes/{representation}", by_name["add_note"], notes, representation)
    yield out
