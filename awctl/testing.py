"""pytest plugin: strict components, so CI cannot pass while a real component silently stopped running.

awctl's tests exercise real components (bubblewrap, tmux, Docker, vLLM, DeepSpeed, TRL, peft, the
SmolLM2 weights, MCP servers, Chromium, Xvfb...). Locally a test whose component is missing skips with
the reason. With ``AWCTL_STRICT_COMPONENTS=1`` (``.ci/run`` sets it) or ``--strict-components`` every
skip is a failure instead, unless the test says the skip has nothing to do with a missing component::

    @pytest.mark.not_a_component("root ignores file permissions")

Loaded for awctl's own suite through ``addopts = -p awctl.testing``; a plugin package can load it the
same way to hold its own CI to the same rule. Loading it also lets idle OpenMP workers of the test
processes sleep instead of spinning (as the ``awctl`` command does), which matters on shared CI cores.
"""

from __future__ import annotations

import os
from collections.abc import Generator
from typing import Any

import pytest

from awctl.models.backends.cpu_runtime import prefer_idle_openmp_workers

STRICT_ENV = "AWCTL_STRICT_COMPONENTS"

# Before any test module imports torch (libgomp reads the policy once, when torch loads).
prefer_idle_openmp_workers()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--strict-components",
        action="store_true",
        default=False,
        help=f"fail (not skip) tests whose real component is missing (also {STRICT_ENV}=1)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "not_a_component(reason): this test's skips never mean a missing component"
    )


def strict(config: pytest.Config) -> bool:
    return bool(config.getoption("--strict-components", False)) or os.environ.get(STRICT_ENV, "") not in (
        "",
        "0",
    )


def _reason(report: Any) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2])
    return str(longrepr)


def _fail(report: Any, reason: str) -> None:
    report.outcome = "failed"
    report.longrepr = (
        f"strict components: this test skipped ({reason.removeprefix('Skipped: ')}). In CI a missing "
        "real component is a failure: install it (make venv vllm-venv system-deps), or mark the test "
        "@pytest.mark.not_a_component(reason) when the skip is not about a component."
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[Any]) -> Generator[Any, Any, None]:
    outcome = yield
    report = outcome.get_result()
    exempt = item.get_closest_marker("not_a_component") is not None or hasattr(report, "wasxfail")
    if report.skipped and not exempt and strict(item.config):
        _fail(report, _reason(report))


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Generator[Any, Any, None]:
    # A module-level importorskip skips the whole module at collection time.
    outcome = yield
    report = outcome.get_result()
    if report.skipped and strict(collector.config):
        _fail(report, _reason(report))
