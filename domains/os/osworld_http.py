"""An adapter to an OSWorld-style desktop server over HTTP (OSWorld's ``desktop_env/server``).

OSWorld runs a Flask server inside its VM; its ``PythonController`` drives it. :class:`OsWorldHttpEnv`
speaks the same endpoints, so awctl can record on an OSWorld VM (or anything serving that API):

* ``GET /accessibility`` → ``{"AT": "<desktop-frame ...>"}`` (the observation),
* ``POST /execute`` ``{"command": ["python", "-c", "<prefix>; <code>"], "shell": false}`` → ``{"status",
  "output", "error", "returncode"}`` (actions: pyautogui code, computer_13 actions turned into the code
  OSWorld's controller runs; the prefix is the controller's ``import pyautogui; import time;
  pyautogui.FAILSAFE = False``),
* ``POST /screen_size`` → ``{"width", "height"}``, ``GET /platform``, ``GET /screenshot`` (PNG),
* ``POST /setup/upload`` (multipart ``file_path`` + ``file_data``), ``POST /setup/launch``
  ``{"command": [...]}`` and ``POST /file`` (form ``file_path``) for a task's setup.

An HTTP server cannot give each episode a fresh machine (OSWorld reverts a VM snapshot through its
provider, outside the server), so ``reset`` calls ``reset_hook`` when one is given, then applies the task's
setup through the endpoints. Only the standard library is used (``urllib``).
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from typing import TYPE_CHECKING, Any

from awctl.env import Environment, StepResult
from awctl.errors import AwctlError, EnvironmentUnavailable

from .a11y import A11yObservation, linearize, parse_observation, render_observation
from .actions import action_python
from .codec import OsActionCodec

if TYPE_CHECKING:
    from collections.abc import Callable

    from awctl.domain import Task

PKGS_PREFIX = "import pyautogui; import time; pyautogui.FAILSAFE = False; "


class OsWorldClient:
    """Plain calls to an OSWorld desktop server at ``base_url`` (errors raise :class:`EnvironmentUnavailable`)."""

    def __init__(self, base_url: str, timeout_s: float = 120.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout_s = timeout_s

    def _request(self, method: str, path: str, body: bytes | None = None, content_type: str | None = None,
                 timeout: float | None = None) -> tuple[int, bytes, str]:
        request = urllib.request.Request(self.base_url + path, data=body, method=method)
        if content_type:
            request.add_header("Content-Type", content_type)
        try:
            with urllib.request.urlopen(request, timeout=timeout or self.timeout_s) as response:
                return response.status, response.read(), response.headers.get("Content-Type", "")
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read(), exc.headers.get("Content-Type", "") if exc.headers else ""
        except (urllib.error.URLError, OSError) as exc:
            raise EnvironmentUnavailable(f"desktop server {self.base_url} unreachable ({method} {path}): {exc}",
                                         hint="start the OSWorld desktop server (or the stand-in) first") from None

    def _json(self, method: str, path: str, payload: dict[str, Any] | None = None, timeout: float | None = None) -> Any:
        body = json.dumps(payload).encode() if payload is not None else None
        status, data, _ = self._request(method, path, body, "application/json" if body is not None else None, timeout)
        if status != 200:
            raise EnvironmentUnavailable(f"desktop server: {method} {path} answered {status}: {data[:300]!r}")
        try:
            return json.loads(data)
        except json.JSONDecodeError:
            raise EnvironmentUnavailable(f"desktop server: {method} {path} did not answer JSON: {data[:300]!r}") from None

    def accessibility(self) -> str:
        answer = self._json("GET", "/accessibility")
        if not isinstance(answer, dict) or not isinstance(answer.get("AT"), str):
            raise EnvironmentUnavailable("desktop server: /accessibility answered without an 'AT' string")
        return answer["AT"]

    def screen_size(self) -> tuple[int, int]:
        answer = self._json("POST", "/screen_size")
        return int(answer["width"]), int(answer["height"])

    def platform(self) -> str:
        status, data, _ = self._request("GET", "/platform")
        if status != 200:
            raise EnvironmentUnavailable(f"desktop server: /platform answered {status}")
        return data.decode().strip()

    def screenshot(self) -> bytes:
        status, data, _ = self._request("GET", "/screenshot")
        if status != 200 or not data.startswith(b"\x89PNG"):
            raise EnvironmentUnavailable(f"desktop server: /screenshot answered {status} without a PNG")
        return data

    def execute(self, command: list[str] | str, shell: bool = False, timeout: float | None = None) -> dict[str, Any]:
        answer = self._json("POST", "/execute", {"command": command, "shell": shell}, timeout)
        return answer if isinstance(answer, dict) else {"status": "error", "message": str(answer)}

    def execute_python(self, code: str) -> dict[str, Any]:
        """What OSWorld's ``PythonController.execute_python_command`` sends."""
        return self.execute(["python", "-c", PKGS_PREFIX + code])

    def launch(self, command: list[str] | str, shell: bool = False) -> None:
        status, data, _ = self._request("POST", "/setup/launch", json.dumps({"command": command, "shell": shell}).encode(),
                                        "application/json")
        if status != 200:
            raise EnvironmentUnavailable(f"desktop server: launching {command!r} failed ({status}): {data[:300]!r}")

    def upload(self, file_path: str, content: bytes) -> None:
        boundary = uuid.uuid4().hex
        name = file_path.rsplit("/", 1)[-1]
        body = (
            f"--{boundary}\r\nContent-Disposition: form-data; name=\"file_path\"\r\n\r\n{file_path}\r\n"
            f"--{boundary}\r\nContent-Disposition: form-data; name=\"file_data\"; filename=\"{name}\"\r\n"
            "Content-Type: application/octet-stream\r\n\r\n"
        ).encode() + content + f"\r\n--{boundary}--\r\n".encode()
        status, data, _ = self._request("POST", "/setup/upload", body, f"multipart/form-data; boundary={boundary}")
        if status != 200:
            raise EnvironmentUnavailable(f"desktop server: uploading {file_path} failed ({status}): {data[:300]!r}")

    def get_file(self, file_path: str) -> bytes | None:
        body = urllib.parse.urlencode({"file_path": file_path}).encode()
        status, data, _ = self._request("POST", "/file", body, "application/x-www-form-urlencoded")
        return data if status == 200 else None


def _app_windows(xml: str, app: str) -> int:
    try:
        obs = parse_observation(xml)
    except Exception:  # a half-built tree while an app starts: not ready yet
        return 0
    if obs.tree is None:
        return 0
    st = "https://accessibility.ubuntu.example.org/ns/state"
    return sum(1 for a in obs.tree.children if a.name == app for w in a.children if w.state("showing", st))


class OsWorldHttpEnv(Environment):
    """The os domain's Environment over an OSWorld desktop server (see the module docstring).

    ``observation``: ``xml`` (the server's tree as it sends it) or ``table`` (OSWorld's linearization of
    it). ``reset_hook`` brings the desktop back to a clean state (e.g. reverts a VM snapshot).
    """

    domain = "os"

    def __init__(self, base_url: str, *, observation: str = "xml", reset_hook: Callable[[], None] | None = None,
                 settle_s: float = 0.5, settle_max_s: float = 6.0, wait_s: float = 1.0, poll_s: float = 0.1,
                 app_timeout_s: float = 30.0) -> None:
        if observation not in ("xml", "table"):
            raise AwctlError(f"observation must be 'xml' or 'table', got {observation!r}")
        self.client = OsWorldClient(base_url)
        self.observation = observation
        self.reset_hook = reset_hook
        self.settle_s, self.settle_max_s, self.wait_s, self.poll_s = settle_s, settle_max_s, wait_s, poll_s
        self.app_timeout_s = app_timeout_s
        self.codec: OsActionCodec | None = None

    def _render(self, xml: str) -> str:
        if self.observation == "xml":
            return xml
        obs = parse_observation(xml)
        return render_observation(A11yObservation("table", rows=linearize(obs.tree) if obs.tree else []))

    def _settled(self, min_wait_s: float = 0.15) -> str:
        time.sleep(min_wait_s)
        start = time.monotonic()
        xml = self.client.accessibility()
        since = time.monotonic()
        while time.monotonic() - start < self.settle_max_s and time.monotonic() - since < self.settle_s:
            time.sleep(self.poll_s)
            again = self.client.accessibility()
            if again != xml:
                xml, since = again, time.monotonic()
        return self._render(xml)

    def reset(self, task: Task | None = None, seed: int | None = None) -> str:
        if self.reset_hook is not None:
            self.reset_hook()
        self.codec = OsActionCodec(screen=self.client.screen_size())
        setup = dict(task.setup) if task is not None else {}
        for rel, content in (setup.get("files") or {}).items():
            self.client.upload(f"~/{rel}", content.encode())
        counts: dict[str, int] = {}
        for entry in setup.get("apps") or []:
            command = [entry] if isinstance(entry, str) else list(entry)
            self.client.launch(command)
            app = command[0]
            counts[app] = counts.get(app, 0) + 1
            deadline = time.monotonic() + self.app_timeout_s
            while _app_windows(self.client.accessibility(), app) < counts[app]:
                if time.monotonic() > deadline:
                    raise EnvironmentUnavailable(f"{app} showed no window within {self.app_timeout_s:.0f} s")
                time.sleep(self.poll_s)
        return self._settled(min_wait_s=0.3)

    def step(self, action: str) -> StepResult:
        if self.codec is None:
            self.codec = OsActionCodec(screen=self.client.screen_size())
        parsed = self.codec.parse(action)
        info: dict[str, Any] = {"form": parsed.form}
        code = action_python(parsed)
        if code:
            result = self.client.execute_python(code)
            info["exec_ok"] = result.get("status") == "success" and result.get("returncode", 0) == 0
            if result.get("error") or result.get("message"):
                info["exec_error"] = str(result.get("error") or result.get("message"))[-500:]
        elif parsed.special == "WAIT":
            time.sleep(self.wait_s)
        return StepResult(self._settled(), done=parsed.special in ("DONE", "FAIL"), info=info)

    def screenshot(self) -> bytes:
        """The current screen as PNG bytes."""
        return self.client.screenshot()
