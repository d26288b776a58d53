"""The web apps shipped with the web domain, by name: each is served on 127.0.0.1 and reached in the
browser under its own host name (``http://shop.test/``, ``http://tracker.test/``)."""

from __future__ import annotations

from .base import App, AppServer
from .shop import ShopApp
from .tracker import TrackerApp

APPS: dict[str, type[App]] = {"shop": ShopApp, "tracker": TrackerApp}

__all__ = ["APPS", "App", "AppServer", "ShopApp", "TrackerApp"]
