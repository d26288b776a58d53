"""The real web environment: Debian's Chromium driven by Playwright against the shipped apps.

:class:`WebEnv` starts, once per environment, one :class:`~.apps.base.AppServer` per shipped app on a free
``127.0.0.1`` port and a headless Chromium (``/usr/bin/chromium``; ``playwright install`` is never needed)
whose host resolver maps each app's host name onto its port (``shop.test`` → ``127.0.0.1:<port>``) and
resolves nothing else, so pages reach only the local apps. ``reset(task)`` gives every app a fresh SQLite
database seeded from ``task.setup[<app>]``, opens a fresh browser context (no cookies, no history) and the
start page (``task.setup["start"]``, default the first app's home), and returns the first observation.

``step(action)`` runs the action's calls in order (stopping at the first that fails), waits until the page
has loaded, and returns the observation in :func:`~.codec.render_observation`'s layout: the open tabs, the
last action's error if any, and the active tab's accessibility tree with stable bids (see :mod:`.axtree`).
``info`` carries ``error``, ``messages`` (``send_msg_to_user``/``report_infeasible`` texts), ``url`` and
``elapsed_s``; ``report_infeasible`` ends the episode.

Playwright's synchronous API must be used from one thread: every browser call runs on the environment's own
worker thread, so the environment may be used from any thread (the recorder's pool, ``asyncio.to_thread``).
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

from awctl.env import Environment, StepResult
from awctl.errors import CodecError, EnvironmentUnavailable

from .apps import APPS, AppServer
from .axtree import MARK_BIDS_JS, bids_by_backend_id, flatten
from .codec import Tab, WebAction, WebActionCodec, render_observation

if TYPE_CHECKING:
    from awctl.domain import Task

CHROMIUM = "/usr/bin/chromium"
BROWSER_FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
)
T = TypeVar("T")
# Actions after which the page may start loading another document (pages can react to any input event).
MAY_NAVIGATE = frozenset({"click", "dblclick", "press", "select_option", "drag_and_drop", "upload_file",
                          "mouse_up", "mouse_down", "mouse_click", "mouse_dblclick", "mouse_drag_and_drop",
                          "mouse_upload_file", "keyboard_down", "keyboard_up", "keyboard_press", "keyboard_type",
                          "keyboard_insert_text"})


def app_url(app: str, path: str = "/") -> str:
    """The URL of ``path`` on a shipped app as the browser sees it (``app_url("shop", "/cart")``)."""
    return f"http://{APPS[app].host}{path}"


def playwright_status() -> tuple[bool, str]:
    """Whether Chromium and the playwright package are present (cheap: nothing is started)."""
    import importlib.util

    if not Path(CHROMIUM).exists():
        return False, f"{CHROMIUM} missing (apt-get install -y chromium)"
    if importlib.util.find_spec("playwright") is None:
        return False, "the playwright package is missing (pip install 'awctl[web]')"
    return True, f"headless {CHROMIUM} via playwright, apps: {', '.join(APPS)}"


class WebEnv(Environment):
    """A browser session per episode on the shipped apps. ``settings`` default to ``[domains.web]`` of
    awctl.toml: ``chromium`` (path), ``action_timeout_ms`` (default 3000), ``navigation_timeout_ms``
    (10000), ``max_noop_ms`` (3000), ``viewport`` ([1280, 720])."""

    domain = "web"

    def __init__(self, settings: dict[str, Any] | None = None) -> None:
        if settings is None:
            from awctl.config import load_project_config

            settings = load_project_config().domain_settings("web")
        self.settings = dict(settings)
        self.chromium = str(self.settings.get("chromium", CHROMIUM))
        self.action_timeout = float(self.settings.get("action_timeout_ms", 3000))
        self.nav_timeout = float(self.settings.get("navigation_timeout_ms", 10000))
        self.max_noop = float(self.settings.get("max_noop_ms", 3000))
        self.viewport = list(self.settings.get("viewport", [1280, 720]))
        self.codec = WebActionCodec()
        self._worker: ThreadPoolExecutor | None = None
        self._servers: dict[str, AppServer] = {}
        self._tmp: Path | None = None
        self._pw: Any = None
        self._browser: Any = None
        self._context: Any = None
        self._page: Any = None
        self._cdp: dict[int, Any] = {}
        self.messages: list[tuple[str, str]] = []
        self.episode = 0

    # ── threading ──
    def _call(self, fn: Callable[..., T], *args: Any) -> T:
        if self._worker is None:
            self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="awctl-web")
        return self._worker.submit(fn, *args).result()

    # ── lifecycle ──
    def _start(self) -> None:
        if self._browser is not None:
            return
        ok, why = playwright_status() if self.chromium == CHROMIUM else (Path(self.chromium).exists(), self.chromium)
        if not ok:
            raise EnvironmentUnavailable(f"no browser for the web domain: {why}",
                                         hint="apt-get install -y chromium && pip install 'awctl[web]'")
        from playwright.sync_api import sync_playwright

        self._tmp = Path(tempfile.mkdtemp(prefix="awctl-web-"))
        for name in APPS:
            self._servers[name] = AppServer()
        rules = [f"MAP {APPS[n].host}:80 127.0.0.1:{s.port}" for n, s in self._servers.items()]
        rules += ["EXCLUDE 127.0.0.1", "MAP * ~NOTFOUND"]
        self._pw = sync_playwright().start()
        try:
            self._browser = self._pw.chromium.launch(
                executable_path=self.chromium, headless=True,
                args=[*BROWSER_FLAGS, f"--host-resolver-rules={', '.join(rules)}"])
        except Exception:
            self._pw.stop()
            self._pw = None
            raise

    def reset(self, task: Task | None = None, seed: int | None = None) -> str:
        return self._call(self._reset, task)

    def _reset(self, task: Task | None) -> str:
        self._start()
        assert self._tmp is not None
        self._close_context()
        self.episode += 1
        self.messages = []
        setup = dict(task.setup) if task is not None else {}
        for name, server in self._servers.items():
            db = self._tmp / f"{name}-{self.episode}.sqlite"
            server.swap(APPS[name](db, setup.get(name) or {}))
        self._context = self._browser.new_context(
            viewport={"width": int(self.viewport[0]), "height": int(self.viewport[1])})
        self._context.set_default_timeout(self.action_timeout)
        self._context.set_default_navigation_timeout(self.nav_timeout)
        self._page = self._context.new_page()
        start = setup.get("start") or app_url(next(iter(APPS)) if not setup.get("apps") else setup["apps"][0])
        error = None
        try:
            self._page.goto(start, wait_until="load")
        except Exception as exc:
            error = _error_text(exc)
        return self._observe(error)

    def step(self, action: str) -> StepResult:
        return self._call(self._step, action)

    def _step(self, action: str) -> StepResult:
        if self._context is None:
            self._reset(None)
        t0 = time.monotonic()
        error: str | None = None
        done = False
        try:
            calls = self.codec.parse(action)
        except CodecError as exc:
            calls, error = [], f"invalid action: {exc.message}"
        for call in calls:
            try:
                self._apply(call)
            except Exception as exc:  # any failure of the action is shown to the agent, as BrowserGym does
                error = _error_text(exc)
                break
            if call.name == "report_infeasible":
                done = True
        self._settle(any(c.name in MAY_NAVIGATE for c in calls))
        observation = self._observe(error)
        info: dict[str, Any] = {"elapsed_s": round(time.monotonic() - t0, 4), "url": self._page.url}
        if error:
            info["error"] = error
        if self.messages:
            info["messages"] = " | ".join(f"{k}: {v}" for k, v in self.messages)
        return StepResult(observation, done=done, info=info)

    def close(self) -> None:
        if self._worker is None:
            self._shutdown_servers()
            return
        try:
            self._call(self._close_all)
        finally:
            self._worker.shutdown(wait=True)
            self._worker = None
            self._shutdown_servers()

    def _close_context(self) -> None:
        self._cdp = {}
        if self._context is not None:
            with contextlib.suppress(Exception):  # a crashed browser still lets the episode end
                self._context.close()
            self._context = self._page = None

    def _close_all(self) -> None:
        self._close_context()
        if self._browser is not None:
            with contextlib.suppress(Exception):  # closing after a crash
                self._browser.close()
        if self._pw is not None:
            with contextlib.suppress(Exception):
                self._pw.stop()
        self._browser = self._pw = None

    def _shutdown_servers(self) -> None:
        for server in self._servers.values():
            server.stop()
        self._servers = {}
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    # ── actions ──
    def _element(self, bid: str) -> Any:
        if not bid or any(not (c.isalnum() or c in "-_.") for c in bid):
            raise ActionError(f"no element with bid {bid!r} on the page")
        locator = self._page.locator(f'[bid="{bid}"]')
        if locator.count() == 0:
            raise ActionError(f"no element with bid {bid!r} on the page")
        return locator.first

    def _allowed(self, url: str) -> bool:
        parts = urlsplit(url)
        if url == "about:blank":
            return True
        hosts = {APPS[n].host for n in APPS}
        return parts.scheme == "http" and (parts.hostname in hosts and parts.port in (None, 80)
                                           or parts.hostname == "127.0.0.1")

    def _apply(self, a: WebAction) -> None:
        n, page = a.name, self._page
        t = self.action_timeout
        before = list(self._context.pages)
        if n == "noop":
            page.wait_for_timeout(max(0.0, min(float(a.get("wait_ms")), self.max_noop)))
        elif n in ("send_msg_to_user", "report_infeasible"):
            self.messages.append((n, a.get("text", a.get("reason"))))
        elif n == "scroll":
            page.mouse.wheel(a.get("delta_x"), a.get("delta_y"))
        elif n == "fill":
            self._element(a.get("bid")).fill(a.get("value"), timeout=t)
        elif n == "select_option":
            opts = a.get("options")
            self._element(a.get("bid")).select_option(opts if isinstance(opts, str) else list(opts), timeout=t)
        elif n in ("click", "dblclick"):
            getattr(self._element(a.get("bid")), n)(button=a.get("button"), modifiers=list(a.get("modifiers")),
                                                     timeout=t)
        elif n in ("hover", "focus", "clear"):
            getattr(self._element(a.get("bid")), n)(timeout=t)
        elif n == "press":
            self._element(a.get("bid")).press(a.get("key_comb"), timeout=t)
        elif n == "drag_and_drop":
            self._element(a.get("from_bid")).drag_to(self._element(a.get("to_bid")), timeout=t)
        elif n == "upload_file":
            files = a.get("file")
            self._element(a.get("bid")).set_input_files(files if isinstance(files, str) else list(files), timeout=t)
        elif n == "mouse_move":
            page.mouse.move(a.get("x"), a.get("y"))
        elif n in ("mouse_up", "mouse_down"):
            page.mouse.move(a.get("x"), a.get("y"))
            getattr(page.mouse, n.split("_")[1])(button=a.get("button"))
        elif n == "mouse_click":
            page.mouse.click(a.get("x"), a.get("y"), button=a.get("button"))
        elif n == "mouse_dblclick":
            page.mouse.dblclick(a.get("x"), a.get("y"), button=a.get("button"))
        elif n == "mouse_drag_and_drop":
            page.mouse.move(a.get("from_x"), a.get("from_y"))
            page.mouse.down()
            page.mouse.move(a.get("to_x"), a.get("to_y"))
            page.mouse.up()
        elif n == "mouse_upload_file":
            with page.expect_file_chooser(timeout=t) as chooser:
                page.mouse.click(a.get("x"), a.get("y"))
            files = a.get("file")
            chooser.value.set_files(files if isinstance(files, str) else list(files))
        elif n.startswith("keyboard_"):
            method = {"keyboard_down": "down", "keyboard_up": "up", "keyboard_press": "press",
                      "keyboard_type": "type", "keyboard_insert_text": "insert_text"}[n]
            getattr(page.keyboard, method)(a.get("key", a.get("text")))
        elif n == "goto":
            url = a.get("url")
            if not self._allowed(url):
                raise ActionError(f"cannot open {url!r}: only the local apps "
                                  f"({', '.join(app_url(x) for x in APPS)}) are reachable")
            page.goto(url, wait_until="load")
        elif n in ("go_back", "go_forward"):
            getattr(page, n)(wait_until="load")
        elif n == "new_tab":
            self._page = self._context.new_page()
            self._page.bring_to_front()
        elif n == "tab_close":
            page.close()
            pages = self._context.pages
            self._page = pages[-1] if pages else self._context.new_page()
            self._page.bring_to_front()
        elif n == "tab_focus":
            pages = self._context.pages
            index = a.get("index")
            if not 0 <= index < len(pages):
                raise ActionError(f"no tab with index {index} ({len(pages)} open)")
            self._page = pages[index]
            self._page.bring_to_front()
        # A page the action opened (a link with target=_blank, window.open) becomes the active tab.
        opened = [p for p in self._context.pages if p not in before and p is not self._page]
        if opened and n != "new_tab":
            self._page = opened[-1]
            self._page.bring_to_front()

    def _settle(self, may_navigate: bool) -> None:
        """Wait until a navigation the action started (a link, a form submission) has loaded."""
        page = self._page
        deadline = time.monotonic() + self.nav_timeout / 1000
        url = page.url
        if may_navigate:
            # A submission's navigation starts within a few event-loop turns of the click; give it that time.
            page.wait_for_timeout(30)
        while time.monotonic() < deadline:
            try:
                page.wait_for_load_state("load", timeout=self.nav_timeout)
                page.evaluate("1")  # fails while a new document is being committed
            except Exception:
                page.wait_for_timeout(20)
                continue
            if page.url == url:
                break
            url = page.url

    # ── observation ──
    def _observe(self, error: str | None) -> str:
        page = self._page
        tabs = [Tab(i, _safe_title(p), p.url, p is page) for i, p in enumerate(self._context.pages)]
        nodes: list[Any] = []
        for _ in range(3):
            try:
                page.evaluate(MARK_BIDS_JS)
                cdp = self._cdp.get(id(page))
                if cdp is None:
                    cdp = self._cdp[id(page)] = self._context.new_cdp_session(page)
                document = cdp.send("DOM.getDocument", {"depth": -1})
                ax = cdp.send("Accessibility.getFullAXTree")
                nodes = flatten(ax.get("nodes", []), bids_by_backend_id(document))
                break
            except Exception:  # the document changed under us (a late navigation): read it again
                page.wait_for_timeout(50)
                with contextlib.suppress(Exception):
                    page.wait_for_load_state("load")
        return render_observation(tabs, nodes, error)


class ActionError(Exception):
    """An action that cannot be carried out on the current page (shown as the last action's error)."""


def _safe_title(page: Any) -> str:
    try:
        return str(page.title())
    except Exception:
        return ""


def _error_text(exc: BaseException) -> str:
    """One line for the agent: the exception's first line without Playwright's call log."""
    text = str(exc).strip().split("\n", 1)[0]
    for prefix in ("Locator.", "Page.", "Keyboard.", "Mouse."):
        if text.startswith(prefix) and ": " in text:
            text = text.split(": ", 1)[1]
    name = type(exc).__name__
    return text if isinstance(exc, ActionError) else f"{name}: {text}"
