"""Text files in, text files out, with errors that say where and why, and outputs that are never partial.

Reading (:func:`open_text_reader`, :func:`iter_lines`): plain, ``.gz`` and ``.zst`` files are decoded as
UTF-8 line by line. Damage is an :class:`~awctl.errors.InputError` naming the file, the line, the byte
offset (in the decompressed data) and the cause — a truncated or corrupt compressed stream, bytes that are
not UTF-8 — never a bare ``UnicodeDecodeError``/``EOFError``. :func:`iter_lines` can instead hand a bad
line back as a :class:`BadLine` and read on, for the commands that quarantine (prep, verify).

Writing (:func:`open_text_writer`): the data goes to a hidden temporary file beside the output, renamed
onto the output only when the writer closes without an error, so an interrupted or failed command never
leaves a partial output that looks complete.
"""

from __future__ import annotations

import gzip
import io
import os
import sys
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from awctl.errors import InputError

SKIP_HINT = (
    "To keep the readable lines, `awctl data convert --skip-bad IN -o OUT` copies them and lists each "
    "damaged one"
)


def _kind(path: Path) -> str:
    return {".gz": "gzip", ".zst": "zstd"}.get(path.suffix, "plain")


def _open_binary(path: Path) -> IO[bytes]:
    kind = _kind(path)
    if kind == "gzip":
        return gzip.open(path, "rb")  # type: ignore[return-value]
    if kind == "zstd":
        try:
            import zstandard
        except ImportError as exc:
            raise InputError(
                f"{path}: reading .zst needs the zstandard package", hint="pip install 'awctl[data]'"
            ) from exc
        raw = open(path, "rb")  # noqa: SIM115 - closed with the reader
        return io.BufferedReader(zstandard.ZstdDecompressor().stream_reader(raw, closefd=True))  # type: ignore[arg-type]
    return open(path, "rb")  # noqa: SIM115


def _stream_errors() -> tuple[type[BaseException], ...]:
    errors: list[type[BaseException]] = [EOFError, OSError, zlib.error]
    try:
        import zstandard

        errors.append(zstandard.ZstdError)
    except ImportError:
        pass
    return tuple(errors)


@dataclass(frozen=True)
class BadLine:
    """A line that could not be read as text, or the point where the stream broke (``fatal``)."""

    path: str
    line: int
    offset: int
    reason: str
    fatal: bool = False

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line} (byte {self.offset})"

    def error(self, hint: str = "") -> InputError:
        return InputError(f"{self.where}: {self.reason}", hint=hint or None)


def _truncation(path: Path, line: int, offset: int, exc: BaseException) -> BadLine:
    kind = _kind(path)
    what = f"{kind} stream" if kind != "plain" else "file"
    detail = str(exc) or type(exc).__name__
    return BadLine(
        str(path), line, offset,
        f"the {what} is truncated or corrupt after line {line - 1} ({type(exc).__name__}: {detail}); "
        f"the lines before it are intact", fatal=True,
    )


def _not_utf8(path: Path, line: int, offset: int, raw: bytes, exc: UnicodeDecodeError) -> BadLine:
    bad = raw[exc.start : exc.start + 4]
    return BadLine(str(path), line, offset + exc.start, f"not UTF-8 text (bytes {bad!r}); is this a binary file?")


def iter_lines(path: str | Path, *, keep_going: bool = False) -> Iterator[tuple[int, str | BadLine]]:
    """``(line_number, text)`` for every line of ``path`` (decompressing ``.gz``/``.zst``).

    A line that is not UTF-8 raises :class:`InputError` (``keep_going``: it is yielded as a
    :class:`BadLine` and reading goes on). A truncated or corrupt stream raises (``keep_going``: yields a
    fatal :class:`BadLine` and stops)."""
    path = Path(path)
    line = offset = 0
    try:
        handle = _open_binary(path)
    except FileNotFoundError:
        raise InputError(f"{path}: file not found", hint="check the path") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory, not a file", hint="pass the files inside it") from None
    with handle:
        try:
            for raw in handle:
                line += 1
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    bad = _not_utf8(path, line, offset, raw, exc)
                    if not keep_going:
                        raise bad.error(f"the file must be UTF-8 text. {SKIP_HINT}") from None
                    yield line, bad
                else:
                    yield line, text
                offset += len(raw)
        except _stream_errors() as exc:
            bad = _truncation(path, line + 1, offset, exc)
            if not keep_going:
                raise bad.error(f"re-create or re-download the file. {SKIP_HINT}") from None
            yield line + 1, bad


class _TextReader(io.TextIOBase):
    """A read-only text handle over :func:`iter_lines` (iteration, ``read``, ``readline``)."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._lines = iter_lines(path)
        self._pending = ""

    def readable(self) -> bool:
        return True

    def readline(self, size: int | None = -1) -> str:  # type: ignore[override]
        if self._pending:
            text, self._pending = self._pending, ""
            return text
        for _, text in self._lines:
            return text  # type: ignore[return-value]  # iter_lines raises instead of yielding BadLine
        return ""

    def __next__(self) -> str:
        text = self.readline()
        if not text:
            raise StopIteration
        return text

    def __iter__(self) -> Iterator[str]:
        return self

    def read(self, size: int | None = -1) -> str:
        if size is not None and size >= 0:
            out = self._pending
            while len(out) < size:
                more = self.readline()
                if not more:
                    break
                out += more
            out, self._pending = out[:size], out[size:]
            return out
        return self._pending + "".join(text for _, text in self._lines)  # type: ignore[misc]

    def close(self) -> None:
        self._lines.close()
        super().close()


def open_text_reader(path: str | Path) -> IO[str]:
    """A text handle for reading ``path`` (``-`` is stdin) whose errors name the file, line and cause."""
    if str(path) == "-":
        return sys.stdin
    return _TextReader(Path(path))  # type: ignore[return-value]


class _AtomicWriter(io.TextIOBase):
    """Writes to a temporary file beside ``path``; :meth:`close` renames it onto ``path``, :meth:`discard`
    (or leaving a ``with`` block by an exception) deletes it."""

    def __init__(self, path: Path) -> None:
        self._path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
        self._raw: Any = None
        kind = _kind(path)
        if kind == "gzip":
            self._handle: Any = gzip.open(self._tmp, "wt", encoding="utf-8")  # noqa: SIM115
        elif kind == "zstd":
            import zstandard

            self._raw = open(self._tmp, "wb")  # noqa: SIM115 - closed in close()/discard()
            stream = zstandard.ZstdCompressor().stream_writer(self._raw, closefd=False)
            self._handle = io.TextIOWrapper(stream, encoding="utf-8")
        else:
            self._handle = open(self._tmp, "w", encoding="utf-8")  # noqa: SIM115
        self._done = False

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:  # type: ignore[override]
        return self._handle.write(text)

    def flush(self) -> None:
        if not self._done:
            self._handle.flush()

    def close(self) -> None:
        if self._done:
            return
        self._done = True
        self._handle.close()
        if self._raw is not None:
            self._raw.close()
        os.replace(self._tmp, self._path)
        super().close()

    def discard(self) -> None:
        if self._done:
            return
        self._done = True
        try:
            self._handle.close()
            if self._raw is not None:
                self._raw.close()
        finally:
            self._tmp.unlink(missing_ok=True)
            super().close()

    def __exit__(self, exc_type: Any, *rest: Any) -> None:
        if exc_type is not None:
            self.discard()
        else:
            self.close()


def open_text_writer(path: str | Path) -> IO[str]:
    """A text handle writing ``path`` (``-`` is stdout; ``.gz``/``.zst`` compress) that appears only when
    it closes without an error (use it in a ``with`` block)."""
    if str(path) == "-":
        return sys.stdout
    return _AtomicWriter(Path(path))  # type: ignore[return-value]
