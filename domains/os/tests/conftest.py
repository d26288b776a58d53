"""Fixtures of the os domain's tests: recordings made once per test session on the real desktop.

Desktop tests skip, with the reason, where Xvfb, openbox, the GTK applications, AT-SPI for the system
python or pyautogui are missing (``awctl_domains.os.desktop.missing_components``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from awctl.trajectory import Trajectory, read_trajectories


def require_desktop() -> None:
    from awctl_domains.os.domain import OsDomain

    ok, why = OsDomain().real_env_status()
    if not ok:
        pytest.skip(f"no real desktop: {why}")


def _record(tmp: Path, name: str, task_ids: list[str] | None, settings: dict) -> list[Trajectory]:
    from awctl_domains.os.domain import OsDomain

    from awctl.record import record

    require_desktop()
    domain = OsDomain()
    tasks = [t for t in domain.tasks("basic") if task_ids is None or t.id in task_ids]
    out = tmp / f"{name}.jsonl"
    summary = record(domain, tasks, out, env_settings=settings)
    assert not summary.errors, summary.errors
    return list(read_trajectories(out))


@pytest.fixture(scope="session")
def recorded_xml(tmp_path_factory: pytest.TempPathFactory) -> list[Trajectory]:
    """Every basic task's reference solution recorded on the real desktop (XML observations)."""
    return _record(tmp_path_factory.mktemp("os-xml"), "xml", None, {})


TABLE_TASKS = ["os/basic/append_line", "os/basic/add_numbers", "os/basic/close_discard_changes"]


@pytest.fixture(scope="session")
def recorded_table(tmp_path_factory: pytest.TempPathFactory) -> list[Trajectory]:
    """A few tasks recorded with OSWorld's linearized table as the observation."""
    return _record(tmp_path_factory.mktemp("os-table"), "table", TABLE_TASKS, {"observation": "table"})
