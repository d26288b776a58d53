"""The real desktop environment: actions run on a live Xvfb desktop, observations are its AT-SPI tree.

:class:`OsDesktopEnv` starts a fresh :class:`~.desktop.DesktopSession` per episode (own display, D-Bus,
``HOME``; everything ends on ``close``). ``reset(task)`` applies ``task.setup``:

* ``files``: ``{path relative to HOME: text}`` written before anything starts;
* ``apps``: applications to start, in order, each ``"mousepad"`` or ``["mousepad", "~/notes.txt"]``
  (``~`` is the desktop user's home); the last one started has the focus;

and returns the settled accessibility tree. ``step(action)`` parses the action with the screen size (a bad
action raises :class:`awctl.errors.CodecError`), runs it (Python code or computer_13, through pyautogui
inside the session), waits until the tree stops changing and returns it. ``WAIT`` waits ``wait_s``;
``DONE``/``FAIL`` end the episode (``done``). ``info`` carries whether the code raised (``exec_ok``,
``exec_error``) and timings.

Settings (``[domains.os]`` in awctl.toml, or the ``settings`` argument): ``width``/``height`` (1920x1080),
``observation`` (``xml`` — OSWorld's AT-SPI XML — or ``table``, its linearized table), ``prune_hidden``
(drop objects that are not showing, e.g. closed menus; default true), ``sandbox`` (``auto``/``bwrap``/
``none``), ``wait_s`` (1.0), ``settle_s`` (0.5: how long the tree must stay unchanged before it is returned),
``settle_max_s`` (6.0), ``exec_timeout_s`` (30).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from awctl.env import Environment, StepResult
from awctl.errors import AwctlError

from .a11y import A11yObservation, linearize, render_observation
from .actions import action_python
from .codec import OsActionCodec

if TYPE_CHECKING:
    from awctl.domain import Task

    from .a11y import Node
    from .desktop import DesktopSession

DEFAULTS: dict[str, Any] = {
    "width": 1920, "height": 1080, "observation": "xml", "prune_hidden": True, "sandbox": "auto",
    "wait_s": 1.0, "settle_s": 0.5, "settle_max_s": 6.0, "exec_timeout_s": 30.0,
}


def render_tree(tree: Node, observation: str) -> str:
    """The observation text of ``tree`` in the representation ``observation`` (``xml`` or ``table``)."""
    if observation == "table":
        return render_observation(A11yObservation("table", rows=linearize(tree, "ubuntu")))
    return render_observation(A11yObservation("xml", tree=tree))


class OsDesktopEnv(Environment):
    """A real desktop per episode (see the module docstring)."""

    domain = "os"

    def __init__(self, settings: dict[str, Any] | None = None, **overrides: Any) -> None:
        if settings is None:
            from awctl.config import load_project_config

            settings = load_project_config().domain_settings("os")
        self.settings = {**DEFAULTS, **(settings or {}), **overrides}
        if self.settings["observation"] not in ("xml", "table"):
            raise AwctlError(f"[domains.os] observation must be 'xml' or 'table', got {self.settings['observation']!r}")
        self.width, self.height = int(self.settings["width"]), int(self.settings["height"])
        self.codec = OsActionCodec(screen=(self.width, self.height))
        self.session: DesktopSession | None = None

    # ── episode ──
    def reset(self, task: Task | None = None, seed: int | None = None) -> str:
        from .desktop import DesktopSession

        self.close()
        setup = dict(task.setup) if task is not None else {}
        session = DesktopSession(
            width=self.width, height=self.height, prune_hidden=bool(self.settings["prune_hidden"]),
            sandbox=str(self.settings["sandbox"]), exec_timeout_s=float(self.settings["exec_timeout_s"]),
        )
        self.session = session
        session.start()
        for rel, content in (setup.get("files") or {}).items():
            path = (session.home / rel).resolve()
            if not path.is_relative_to(session.home.resolve()):
                raise AwctlError(f"task setup file {rel!r} lies outside the home directory")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content)
        opened: dict[str, int] = {}
        for entry in setup.get("apps") or []:
            app, *args = [entry] if isinstance(entry, str) else list(entry)
            args = [session.user_home + a[1:] if a.startswith("~") else a for a in args]
            session.launch(app, *args)
            opened[app] = opened.get(app, 0) + 1
            session.wait_for_window(app, opened[app])
        return self._observe(min_wait_s=0.3)

    def step(self, action: str) -> StepResult:
        if self.session is None:
            self.reset()
        assert self.session is not None
        parsed = self.codec.parse(action)
        t0 = time.monotonic()
        info: dict[str, Any] = {"form": parsed.form}
        code = action_python(parsed)
        if code:
            result = self.session.run_code(code)
            info.update(exec_ok=result.ok, exec_s=round(result.seconds, 4))
            if result.error:
                info["exec_error"] = result.error
        if parsed.special == "WAIT" and not code:
            time.sleep(float(self.settings["wait_s"]))
        observation = self._observe()
        info["elapsed_s"] = round(time.monotonic() - t0, 4)
        return StepResult(observation, done=parsed.special in ("DONE", "FAIL"), info=info)

    def _observe(self, min_wait_s: float = 0.15) -> str:
        assert self.session is not None
        tree = self.session.settled_tree(min_wait_s=min_wait_s, stable_s=float(self.settings["settle_s"]),
                                         max_wait_s=float(self.settings["settle_max_s"]))
        return render_tree(tree, str(self.settings["observation"]))

    def close(self) -> None:
        if self.session is not None:
            self.session.close()
            self.session = None

    # ── what a prompt says about this desktop ──
    def describe(self) -> str:
        """One paragraph for the initial-state section: screen, window manager, home, representation."""
        home = self.session.user_home if self.session is not None else "/home/user"
        form = "OSWorld's AT-SPI accessibility tree as XML" if self.settings["observation"] == "xml" else (
            "OSWorld's linearized accessibility tree (tab-separated table)")
        return (f"An Ubuntu-style Linux desktop (Xvfb, openbox window manager) with a {self.width}x{self.height} "
                f"screen. Home directory: {home}. Observations are {form}.")
