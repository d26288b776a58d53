"""One real desktop session: Xvfb, a D-Bus session bus with AT-SPI, openbox, GTK applications.

:class:`DesktopSession` owns everything it starts. Each session gets a temporary directory holding its
``HOME``, ``XDG_RUNTIME_DIR``, D-Bus socket and temp dir, a display number Xvfb picks itself
(``-displayfd``), and a token in the environment of every process it starts (``AWCTL_OS_SESSION``) —
the D-Bus daemon passes its environment to the services it activates (the AT-SPI bus launcher and
registry, dconf), so :meth:`close` finds every process of the session by that token, ends them, and
removes the directory. Nothing outside the session is touched.

Applications and the agent's code run as the desktop user: with bubblewrap installed (``sandbox="auto"``)
each runs in a mount namespace where the host is read-only, only the session directory is writable,
``HOME`` is ``/home/user`` (the same path in every episode, so window titles and saved paths repeat) and
there is no network. Two helper processes talk to the session over pipes: the AT-SPI reader
(``atspi_reader.py`` under the system Python that has the GObject bindings, :data:`SYSTEM_PYTHON`) and the
action executor (``executor.py`` under awctl's Python, with ``pyautogui``).
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from awctl.errors import EnvironmentUnavailable

from .a11y import Node, render_xml, tree_from_atspi

HERE = Path(__file__).resolve().parent
SYSTEM_PYTHON = os.environ.get("AWCTL_OS_SYSTEM_PYTHON", "/usr/bin/python3")
TOKEN_VAR = "AWCTL_OS_SESSION"
SANDBOX_HOME = "/home/user"


@dataclass(frozen=True)
class AppSpec:
    """A GTK application the desktop can start: its command, the AT-SPI application name it registers,
    and where openbox puts its windows (``x, y, width, height``)."""

    command: tuple[str, ...]
    atspi_name: str
    wm_name: str
    geometry: tuple[int, int, int, int]


APPS: dict[str, AppSpec] = {
    "mousepad": AppSpec(("mousepad",), "mousepad", "mousepad", (40, 40, 900, 640)),
    "galculator": AppSpec(("galculator",), "galculator", "galculator", (1000, 40, 340, 380)),
}

REQUIRED_PROGRAMS = ("Xvfb", "dbus-daemon", "openbox")


def missing_components() -> list[str]:
    """What this machine lacks for a desktop session (empty when it can run one); cheap, starts nothing."""
    import importlib.util

    missing = [p for p in REQUIRED_PROGRAMS if shutil.which(p) is None]
    if not Path(SYSTEM_PYTHON).exists():
        missing.append(f"{SYSTEM_PYTHON} (Debian python3)")
    elif not list(Path("/usr/lib").glob("*/girepository-1.0/Atspi-2.0.typelib")) or not Path(
        "/usr/lib/python3/dist-packages/gi"
    ).is_dir():
        missing.append("python3-pyatspi (AT-SPI bindings for the system python)")
    missing += [f"{name} (a GTK application)" for name, spec in APPS.items() if shutil.which(spec.command[0]) is None]
    if importlib.util.find_spec("pyautogui") is None:
        missing.append("pyautogui (pip install 'awctl[os]')")
    return missing


def _openbox_rc(apps: dict[str, AppSpec]) -> str:
    rules = "\n".join(
        f'    <application name="{spec.wm_name}"><position force="yes"><x>{x}</x><y>{y}</y></position>'
        f"<size><width>{w}</width><height>{h}</height></size><focus>yes</focus></application>"
        for spec in apps.values()
        for x, y, w, h in [spec.geometry]
    )
    focus_raise = '<action name="Focus"/><action name="Raise"/>'
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<openbox_config xmlns="http://openbox.org/3.4/rc">
  <focus><focusNew>yes</focusNew><followMouse>no</followMouse><focusLast>yes</focusLast></focus>
  <placement><policy>Smart</policy></placement>
  <desktops><number>1</number></desktops>
  <keyboard>
    <keybind key="A-F4"><action name="Close"/></keybind>
    <keybind key="A-Tab"><action name="NextWindow"><dialog>no</dialog><interactive>no</interactive></action></keybind>
  </keyboard>
  <mouse>
    <dragThreshold>4</dragThreshold>
    <context name="Client"><mousebind button="Left" action="Press">{focus_raise}</mousebind></context>
    <context name="Titlebar"><mousebind button="Left" action="Press">{focus_raise}</mousebind>
      <mousebind button="Left" action="Drag"><action name="Move"/></mousebind></context>
    <context name="Close"><mousebind button="Left" action="Click"><action name="Close"/></mousebind></context>
  </mouse>
  <applications>
{rules}
  </applications>
</openbox_config>
"""


def _pids_with_token(token: str) -> list[int]:
    needle = f"{TOKEN_VAR}={token}".encode()
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            env = (entry / "environ").read_bytes()
        except OSError:
            continue
        if needle in env.split(b"\0"):
            pids.append(int(entry.name))
    return pids


def _end_processes(pids: list[int], grace_s: float = 2.0) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    alive = list(pids)
    while alive and time.monotonic() < deadline:
        time.sleep(0.05)
        alive = [p for p in alive if Path(f"/proc/{p}").exists() and not _is_zombie(p)]
    for pid in alive:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def _children(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if int((entry / "stat").read_text().rsplit(") ", 1)[1].split()[1]) == pid:
                    out.append(int(entry.name))
            except (OSError, IndexError, ValueError):
                continue
    return out


def _is_zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1].startswith("Z")
    except (OSError, IndexError):
        return True


def _cleanup(token: str, procs: list[subprocess.Popen[Any]], root: str) -> None:
    """End every process of a session (by token, then the ones started directly) and remove its files."""
    for _ in range(3):  # a dying D-Bus daemon may still activate a service: sweep until none is left
        pids = _pids_with_token(token)
        if not pids:
            break
        _end_processes(pids)
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        with contextlib.suppress(Exception):
            proc.wait(timeout=5)
    shutil.rmtree(root, ignore_errors=True)


@dataclass
class ExecResult:
    ok: bool
    error: str | None = None
    output: str = ""
    seconds: float = 0.0


@dataclass
class DesktopSession:
    """A desktop of ``width`` x ``height`` pixels. ``start()`` brings it up; ``close()`` ends all of it."""

    width: int = 1920
    height: int = 1080
    apps: dict[str, AppSpec] = field(default_factory=lambda: dict(APPS))
    prune_hidden: bool = True
    sandbox: str = "auto"  # "bwrap", "none" or "auto" (bwrap when installed)
    exec_timeout_s: float = 30.0
    read_timeout_s: float = 30.0

    def __post_init__(self) -> None:
        self.token = uuid.uuid4().hex
        self.root = ""
        self.display = ""
        self.env: dict[str, str] = {}
        self._procs: list[subprocess.Popen[Any]] = []
        self._reader: subprocess.Popen[str] | None = None
        self._executor: subprocess.Popen[bytes] | None = None
        self._exec_pipes: tuple[Any, Any] | None = None
        self._finalizer: weakref.finalize | None = None
        # The reader and the executor each serve one request at a time (the stand-in server is threaded).
        self._reader_lock = threading.Lock()
        self._exec_lock = threading.RLock()

    # ── life cycle ──
    @property
    def home(self) -> Path:
        return Path(self.root) / "home"

    def start(self) -> DesktopSession:
        missing = missing_components()
        if missing:
            raise EnvironmentUnavailable(
                f"no desktop session here: missing {', '.join(missing)}",
                hint="apt-get install -y xvfb dbus-x11 at-spi2-core python3-pyatspi openbox mousepad galculator",
            )
        self.root = tempfile.mkdtemp(prefix="awctl-os-")
        self._finalizer = weakref.finalize(self, _cleanup, self.token, self._procs, self.root)
        try:
            self._start()
        except BaseException:
            self.close()
            raise
        return self

    def _start(self) -> None:
        root = Path(self.root)
        for sub in ("home/.config/openbox", "run", "tmp", "logs"):
            (root / sub).mkdir(parents=True, exist_ok=True)
        (root / "run").chmod(0o700)
        # Xvfb runs without authentication; Xlib still insists on reading an Xauthority file.
        (self.home / ".Xauthority").write_bytes(b"")
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
            "HOME": str(self.home),
            "USER": os.environ.get("USER", "root"),
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
            "TMPDIR": str(root / "tmp"),
            "XAUTHORITY": str(self.home / ".Xauthority"),
            "XDG_RUNTIME_DIR": str(root / "run"),
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_DATA_HOME": str(self.home / ".local/share"),
            "XDG_CACHE_HOME": str(self.home / ".cache"),
            # Settings live in memory: no dconf writes, the same defaults every episode.
            "GSETTINGS_BACKEND": "memory",
            "GDK_BACKEND": "x11",
            "GTK_THEME": "Adwaita",
            "GSK_RENDERER": "cairo",  # GTK 4 without GL on Xvfb
            "LIBGL_ALWAYS_SOFTWARE": "1",
            "NO_AT_BRIDGE": "0",
            "GTK_MODULES": "gail:atk-bridge",
            TOKEN_VAR: self.token,
        }
        self.display = self._start_xvfb()
        self.env["DISPLAY"] = self.display
        self.env["DBUS_SESSION_BUS_ADDRESS"] = self._start_dbus()
        (self.home / ".config/openbox/rc.xml").write_text(_openbox_rc(self.apps))
        self._spawn(["openbox", "--config-file", str(self.home / ".config/openbox/rc.xml")])
        self._start_reader()
        self._start_executor()
        # The WM and the accessibility registry are up once the reader answers and openbox owns the screen.
        deadline = time.monotonic() + 20
        while not self._wm_running():
            if time.monotonic() > deadline:
                raise EnvironmentUnavailable("openbox did not start on the virtual display")
            time.sleep(0.05)
        self.read_apps()

    @property
    def user_home(self) -> str:
        """``HOME`` as the applications and the agent's code see it: ``/home/user`` inside bubblewrap
        (the same path every episode), else the session's own directory."""
        return SANDBOX_HOME if self._use_bwrap() else str(self.home)

    def _jail(self, argv: list[str]) -> tuple[list[str], dict[str, str]]:
        """``argv`` and environment for a process of the desktop user (an application, the agent's code)."""
        if not self._use_bwrap():
            return argv, self.env
        # The host read-only, only the session directory writable, HOME at a fixed path, no network.
        prefix = ["bwrap", "--ro-bind", "/", "/", "--dev-bind", "/dev", "/dev", "--proc", "/proc",
                  "--bind", self.root, self.root, "--tmpfs", "/home", "--bind", str(self.home), SANDBOX_HOME,
                  "--chdir", SANDBOX_HOME, "--unshare-net"]
        home = SANDBOX_HOME
        env = {**self.env, "HOME": home, "XDG_CONFIG_HOME": f"{home}/.config",
               "XDG_DATA_HOME": f"{home}/.local/share", "XDG_CACHE_HOME": f"{home}/.cache",
               "XAUTHORITY": f"{home}/.Xauthority"}
        return [*prefix, *argv], env

    def _spawn(self, argv: list[str], **kwargs: Any) -> subprocess.Popen[Any]:
        env = kwargs.pop("env", self.env)
        # Each program's messages go to logs/<program>.log in the session directory (see log_tail).
        program = Path(next((a for a in argv if not a.startswith("-") and a != "bwrap" and "/" not in a[:1]),
                            argv[0])).name
        log = open(Path(self.root) / "logs" / f"{program}.log", "ab")  # noqa: SIM115 - owned by the child
        try:
            proc = subprocess.Popen(argv, env=env, cwd=str(self.home), stdin=kwargs.pop("stdin", subprocess.DEVNULL),
                                    stdout=kwargs.pop("stdout", log), stderr=kwargs.pop("stderr", log), **kwargs)
        finally:
            log.close()
        self._procs.append(proc)
        return proc

    def log_tail(self, program: str, chars: int = 2000) -> str:
        """The end of what ``program`` wrote to its log in this session (for error messages)."""
        try:
            return (Path(self.root) / "logs" / f"{program}.log").read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def _start_xvfb(self) -> str:
        read_fd, write_fd = os.pipe()
        try:
            self._spawn(["Xvfb", "-displayfd", str(write_fd), "-screen", "0", f"{self.width}x{self.height}x24",
                         "-nolisten", "tcp", "-noreset"], pass_fds=(write_fd,))
        finally:
            os.close(write_fd)
        with os.fdopen(read_fd, "rb") as pipe:
            number = self._read_line(pipe, 20, "Xvfb did not report its display").strip()
        if not number.isdigit():
            raise EnvironmentUnavailable(f"Xvfb reported no display number ({number!r})")
        return f":{number}"

    def _start_dbus(self) -> str:
        address = f"unix:path={self.root}/bus"
        proc = self._spawn(["dbus-daemon", "--session", "--nofork", "--nopidfile", f"--address={address}",
                            "--print-address=1"], stdout=subprocess.PIPE)
        assert proc.stdout is not None
        printed = self._read_line(proc.stdout, 20, "dbus-daemon did not start").strip()
        return printed or address

    @staticmethod
    def _read_line(pipe: Any, timeout: float, error: str) -> str:
        ready, _, _ = select.select([pipe], [], [], timeout)
        if not ready:
            raise EnvironmentUnavailable(error)
        line = pipe.readline()
        return line.decode() if isinstance(line, bytes) else line

    def _wm_running(self) -> bool:
        result = self.run_code(
            "from Xlib import display as _d\n_x = _d.Display()\n"
            "_p = _x.screen().root.get_full_property(_x.intern_atom('_NET_SUPPORTING_WM_CHECK'), 0)\n"
            "print(bool(_p and _p.value))\n_x.close()"
        )
        return result.ok and result.output.strip().endswith("True")

    def close(self) -> None:
        """End every process of the session and delete its directory; safe to call twice."""
        for proc in (self._reader, self._executor):
            if proc is not None and proc.stdin is not None:
                with contextlib.suppress(Exception):
                    proc.stdin.close()
        if self._exec_pipes is not None:
            for pipe in self._exec_pipes:
                with contextlib.suppress(Exception):
                    pipe.close()
            self._exec_pipes = None
        self._reader = self._executor = None
        if self._finalizer is not None:
            self._finalizer()  # runs _cleanup once
            self._finalizer = None

    def __enter__(self) -> DesktopSession:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def pids(self) -> list[int]:
        """Every live process of this session (for tests of the cleanup)."""
        return _pids_with_token(self.token)

    # ── the accessibility tree ──
    def _start_reader(self) -> None:
        self._reader = self._spawn([SYSTEM_PYTHON, "-I", str(HERE / "atspi_reader.py")], stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, text=True)

    def read_apps(self) -> list[dict[str, Any]]:
        """The AT-SPI reader's applications (JSON form)."""
        with self._reader_lock:
            return self._read_apps()

    def _read_apps(self) -> list[dict[str, Any]]:
        if self._reader is None or self._reader.poll() is not None:
            raise EnvironmentUnavailable("the AT-SPI reader is not running")
        assert self._reader.stdin is not None and self._reader.stdout is not None
        self._reader.stdin.write("dump showing\n" if self.prune_hidden else "dump\n")
        self._reader.stdin.flush()
        line = self._read_line(self._reader.stdout, self.read_timeout_s, "the AT-SPI reader did not answer")
        answer = json.loads(line)
        if not answer.get("ok"):
            raise EnvironmentUnavailable(f"reading the accessibility tree failed: {answer.get('error')}")
        return answer["apps"]

    def tree(self) -> Node:
        return tree_from_atspi(self.read_apps(), prune_hidden=self.prune_hidden)

    def settled_tree(self, min_wait_s: float = 0.15, stable_s: float = 0.5, max_wait_s: float = 6.0,
                     poll_s: float = 0.1) -> Node:
        """The tree once it has not changed for ``stable_s`` (or after ``max_wait_s``).

        Some effects arrive late (GTK's file chooser saves asynchronously, ~0.5 s after Enter), so a tree
        that merely repeats once is not yet settled.
        """
        time.sleep(min_wait_s)
        start = time.monotonic()
        tree = self.tree()
        text = render_xml(tree)
        since = time.monotonic()
        while time.monotonic() - start < max_wait_s:
            if time.monotonic() - since >= stable_s:
                break
            time.sleep(poll_s)
            again = self.tree()
            again_text = render_xml(again)
            if again_text != text:
                tree, text, since = again, again_text, time.monotonic()
        return tree

    # ── applications ──
    def launch(self, app: str, *args: str) -> None:
        """Start ``app`` (a key of :attr:`apps`, or any program) with ``args``, inside the session."""
        spec = self.apps.get(app)
        argv = [*(spec.command if spec else (app,)), *args]
        if shutil.which(argv[0]) is None:
            raise EnvironmentUnavailable(f"{argv[0]} is not installed", hint=f"apt-get install -y {argv[0]}")
        argv, env = self._jail(argv)
        self._spawn(argv, env=env)

    def wait_for_window(self, app: str, count: int = 1, timeout_s: float = 30.0) -> None:
        """Wait until ``app`` shows ``count`` showing windows in the accessibility tree."""
        spec = self.apps.get(app)
        name = spec.atspi_name if spec else app
        deadline = time.monotonic() + timeout_s
        while True:
            apps = self.read_apps()
            frames = [
                f for a in apps if a.get("name") == name for f in a.get("children") or []
                if "showing" in (f.get("states") or []) and f.get("extents")
            ]
            if len(frames) >= count:
                return
            if time.monotonic() > deadline:
                raise EnvironmentUnavailable(f"{app} showed no window within {timeout_s:.0f} s")
            time.sleep(0.1)

    # ── actions ──
    def _start_executor(self) -> None:
        req_r, req_w = os.pipe()
        rep_r, rep_w = os.pipe()
        # Agent code may do anything: in bubblewrap it sees the host read-only and has no network.
        argv, env = self._jail([sys.executable, str(HERE / "executor.py"), str(req_r), str(rep_w)])
        try:
            self._executor = self._spawn(argv, env=env, pass_fds=(req_r, rep_w))
        finally:
            os.close(req_r)
            os.close(rep_w)
        self._exec_pipes = (os.fdopen(req_w, "w", encoding="utf-8"), os.fdopen(rep_r, "r", encoding="utf-8"))

    def _use_bwrap(self) -> bool:
        if self.sandbox == "none":
            return False
        available = shutil.which("bwrap") is not None
        if self.sandbox == "bwrap" and not available:
            raise EnvironmentUnavailable("sandbox = 'bwrap' but bubblewrap is not installed",
                                         hint="apt-get install -y bubblewrap, or set sandbox = 'none'")
        return available

    def run_code(self, code: str) -> ExecResult:
        """Run Python ``code`` in the session (pyautogui imported); a hung action is ended after
        ``exec_timeout_s`` and the executor restarted."""
        with self._exec_lock:
            return self._run_code(code)

    def _run_code(self, code: str) -> ExecResult:
        if self._exec_pipes is None or self._executor is None or self._executor.poll() is not None:
            self._start_executor()
        assert self._exec_pipes is not None
        requests, replies = self._exec_pipes
        t0 = time.monotonic()
        try:
            requests.write(json.dumps({"code": code}) + "\n")
            requests.flush()
            line = self._read_line(replies, self.exec_timeout_s, "timeout")
        except (EnvironmentUnavailable, BrokenPipeError, OSError) as exc:
            self._restart_executor()
            why = f"the action did not finish within {self.exec_timeout_s:.0f} s" if str(exc) == "timeout" \
                else f"the action runner died ({exc})"
            return ExecResult(False, why, "", time.monotonic() - t0)
        if not line:
            self._restart_executor()
            return ExecResult(False, "the action runner exited", "", time.monotonic() - t0)
        reply = json.loads(line)
        return ExecResult(bool(reply.get("ok")), reply.get("error"), reply.get("output") or "", time.monotonic() - t0)

    def _restart_executor(self) -> None:
        if self._executor is not None and self._executor.poll() is None:
            # Under bubblewrap the runner is bwrap's child: end it too (programs it started live on).
            for pid in _children(self._executor.pid):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            self._executor.kill()
            with contextlib.suppress(Exception):
                self._executor.wait(timeout=5)
        if self._exec_pipes is not None:
            for pipe in self._exec_pipes:
                with contextlib.suppress(Exception):
                    pipe.close()
        self._exec_pipes = None
        self._start_executor()
