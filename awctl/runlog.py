"""Run logging: every event goes as one JSON object per line to ``log.jsonl`` and, rendered for people, to
stderr at the same time.

The logger is built with :func:`structlog.wrap_logger`, not :func:`structlog.configure`, so a run's logger
never changes logging elsewhere in the process (tests run several runs in one process).
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import IO, Any

import structlog

# Keys kept out of the console rendering: the same on every line, or too long to read there (they stay in
# log.jsonl).
CONSOLE_HIDDEN = frozenset({"run", "traceback"})


class TeeLogger:
    """The structlog "logger" at the end of the chain: writes each event dict to a JSONL file and to a
    console stream. Safe to call from several threads (a lock keeps lines whole)."""

    def __init__(self, path: Path, console: IO[str] | None, colors: bool | None = None) -> None:
        self._file = open(path, "a", encoding="utf-8")  # noqa: SIM115 - closed by close()
        self._console = console
        self._lock = threading.Lock()
        self._json = structlog.processors.JSONRenderer(sort_keys=False, default=str)
        use_colors = bool(colors if colors is not None else console is not None and console.isatty())
        self._pretty = structlog.dev.ConsoleRenderer(colors=use_colors, pad_event_to=30)

    def _emit(self, **event: Any) -> None:
        line = self._json(None, "", dict(event))
        with self._lock:
            if not self._file.closed:
                self._file.write(line + "\n")
                self._file.flush()
            if self._console is not None:
                try:
                    shown = {k: v for k, v in event.items() if k not in CONSOLE_HIDDEN}
                    self._console.write(self._pretty(None, "", shown) + "\n")
                    self._console.flush()
                except (ValueError, OSError):  # console closed (e.g. the terminal went away): keep the file
                    pass

    # structlog calls the method named after the level; all of them go to the same place.
    msg = debug = info = warning = warn = error = critical = exception = fatal = log = _emit

    def close(self) -> None:
        with self._lock:
            self._file.close()


def _to_kwargs(_logger: Any, _method: str, event_dict: dict[str, Any]) -> dict[str, Any]:
    # Returning a dict makes structlog call the logger method with it as keyword arguments.
    return event_dict


def make_run_logger(
    log_path: Path, console: IO[str] | None = sys.stderr, **bound: Any
) -> tuple[Any, TeeLogger]:
    """A structlog logger writing to ``log_path`` (JSON lines) and ``console`` (readable; None for none).

    Each event carries ``timestamp`` (ISO, UTC), ``level`` and ``event`` plus the ``bound`` values
    (e.g. ``run=...``). Returns the logger and its sink; call ``sink.close()`` when the run ends.
    """
    sink = TeeLogger(log_path, console)
    logger = structlog.wrap_logger(
        sink,
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.StackInfoRenderer(),
            structlog.processors.format_exc_info,
            _to_kwargs,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(0),
        cache_logger_on_first_use=False,
    )
    return logger.bind(**bound), sink
