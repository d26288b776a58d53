"""Fixtures of the web domain's tests: one real browser per test module."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="module")
def web_env() -> Iterator[Any]:
    """A real :class:`WebEnv` (headless Chromium + the shipped apps) shared by one module's tests.

    Skips, with the reason, where Chromium or the playwright package is missing.
    """
    from awctl_domains.web.env import WebEnv, playwright_status

    ok, why = playwright_status()
    if not ok:
        pytest.skip(f"no real browser: {why}")
    env = WebEnv({})
    try:
        yield env
    finally:
        env.close()

