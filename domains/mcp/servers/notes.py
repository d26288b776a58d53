"""A notes server: plain-text notes in a folder, with read-only areas.

State: ``DATA/notes/<path>`` files. Seed (``DATA/seed.json``)::

    {"notes": {"todo.md": "- buy milk\\n"}, "readonly": ["archive/"]}

Paths are relative, ``/``-separated, without ``..``; writes under a read-only prefix fail with
``permission denied``. Run: ``python -m awctl_domains.mcp.servers.notes --data DIR``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field

from ._common import data_dir, dumps, load_seed, strict_server

NOTE_PATH = Annotated[
    str,
    Field(
        # Segments may not start with '.', which rules out '..' and hidden files without look-arounds
        # (pydantic's regex engine has none).
        pattern=r"^[A-Za-z0-9_-][A-Za-z0-9_.-]*(/[A-Za-z0-9_-][A-Za-z0-9_.-]*)*$",
        max_length=200,
        description="relative note path such as 'work/plan.md'",
    ),
]
STATE_MARK = ".seeded"
META_FILE = ".readonly.json"


class NotesStore:
    """The notes folder and its rules; every tool goes through here."""

    def __init__(self, root: Path) -> None:
        self.root = root / "notes"
        meta = root / META_FILE
        if not (root / STATE_MARK).exists():
            seed = load_seed(root)
            self.root.mkdir(parents=True, exist_ok=True)
            for rel, text in sorted(seed.get("notes", {}).items()):
                target = self.root / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text, encoding="utf-8")
            meta.write_text(json.dumps(sorted(seed.get("readonly", []))), encoding="utf-8")
            (root / STATE_MARK).write_text("1", encoding="utf-8")
        self.readonly: list[str] = json.loads(meta.read_text(encoding="utf-8"))

    def file(self, rel: str) -> Path:
        return self.root / rel

    def check_writable(self, rel: str) -> None:
        from mcp.server.mcpserver.exceptions import ToolError

        for prefix in self.readonly:
            if rel == prefix.rstrip("/") or rel.startswith(prefix if prefix.endswith("/") else prefix + "/"):
                raise ToolError(f"permission denied: {rel} is under read-only {prefix}")

    def existing(self, rel: str) -> Path:
        from mcp.server.mcpserver.exceptions import ToolError

        path = self.file(rel)
        if not path.is_file():
            raise ToolError(f"no such note: {rel}")
        return path

    def all_notes(self) -> list[str]:
        return sorted(p.relative_to(self.root).as_posix() for p in self.root.rglob("*") if p.is_file())


def build_server(root: Path) -> Any:
    """The notes ``MCPServer`` over the data folder ``root`` (seeded on first use)."""
    from mcp.server.mcpserver.exceptions import ToolError

    store = NotesStore(root)
    server = strict_server("awctl-notes", instructions="Plain-text notes in folders.")

    @server.tool(structured_output=False)
    def list_notes(
        folder: Annotated[str, Field(description="only notes under this folder; '' for all")] = "",
    ) -> str:
        """List note paths (sorted), optionally only those under a folder. Returns a JSON array."""
        prefix = folder.strip("/")
        notes = [n for n in store.all_notes() if not prefix or n.startswith(prefix + "/")]
        return dumps(notes)

    @server.tool(structured_output=False)
    def read_note(path: NOTE_PATH) -> str:
        """Return the full text of a note."""
        return store.existing(path).read_text(encoding="utf-8")

    @server.tool(structured_output=False)
    def write_note(
        path: NOTE_PATH,
        content: str,
        overwrite: Annotated[bool, Field(description="replace an existing note")] = True,
    ) -> str:
        """Create or replace a note with the given content."""
        store.check_writable(path)
        target = store.file(path)
        if target.exists() and not overwrite:
            raise ToolError(f"note exists: {path} (pass overwrite=true to replace it)")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
        return f"wrote {path} ({len(content.encode('utf-8'))} bytes)"

    @server.tool(structured_output=False)
    def append_note(path: NOTE_PATH, text: str) -> str:
        """Append text to a note (a newline is added first when the note does not end with one)."""
        store.check_writable(path)
        target = store.existing(path)
        old = target.read_text(encoding="utf-8")
        sep = "" if not old or old.endswith("\n") else "\n"
        target.write_text(old + sep + text, encoding="utf-8")
        return f"appended {len(text.encode('utf-8'))} bytes to {path}"

    @server.tool(structured_output=False)
    def delete_note(path: NOTE_PATH) -> str:
        """Delete a note."""
        store.check_writable(path)
        store.existing(path).unlink()
        return f"deleted {path}"

    @server.tool(structured_output=False)
    def move_note(source: NOTE_PATH, destination: NOTE_PATH) -> str:
        """Move or rename a note; fails when the destination exists."""
        store.check_writable(source)
        store.check_writable(destination)
        src = store.existing(source)
        dst = store.file(destination)
        if dst.exists():
            raise ToolError(f"destination exists: {destination}")
        dst.parent.mkdir(parents=True, exist_ok=True)
        src.rename(dst)
        return f"moved {source} -> {destination}"

    @server.tool(structured_output=False)
    def search_notes(
        query: Annotated[str, Field(min_length=1, description="case-insensitive substring")],
    ) -> str:
        """Find lines containing the query. Returns a JSON array of {path, line, text}, in path/line order."""
        hits = []
        needle = query.lower()
        for rel in store.all_notes():
            for number, line in enumerate(store.file(rel).read_text(encoding="utf-8").splitlines(), 1):
                if needle in line.lower():
                    hits.append({"path": rel, "line": number, "text": line})
        return dumps(hits)

    return server


def main(argv: list[str] | None = None) -> None:
    build_server(data_dir(argv if argv is not None else sys.argv[1:])).run()


if __name__ == "__main__":
    main()
