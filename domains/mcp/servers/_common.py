"""Shared start-up plumbing for the demo servers: where the data lives and what it is seeded with."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

DATA_ENV = "AWCTL_MCP_DATA"
SEED_FILE = "seed.json"


def data_dir(argv: list[str] | None = None) -> Path:
    """The server's data directory from ``--data`` or ``$AWCTL_MCP_DATA``; created when missing.

    A server started with neither refuses to run, because silently using the working directory would let
    two episodes share (and corrupt) state.
    """
    parser = argparse.ArgumentParser(add_help=True)
    parser.add_argument("--data", default=os.environ.get(DATA_ENV), help=f"state folder (or ${DATA_ENV})")
    args = parser.parse_args(argv)
    if not args.data:
        parser.error(f"give the state folder with --data DIR or the {DATA_ENV} environment variable")
    path = Path(args.data)
    path.mkdir(parents=True, exist_ok=True)
    return path


def load_seed(path: Path) -> dict[str, Any]:
    """The initial data in ``path/seed.json`` (``{}`` when absent); a bad file names itself and the fix."""
    seed = path / SEED_FILE
    if not seed.exists():
        return {}
    try:
        data = json.loads(seed.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise SystemExit(
            f"{seed}:{exc.lineno}: invalid JSON ({exc.msg}); fix or delete the seed file"
        ) from None
    if not isinstance(data, dict):
        raise SystemExit(f"{seed}: expected a JSON object of initial data, got {type(data).__name__}")
    return data


def dumps(value: Any) -> str:
    """Stable JSON text for tool results: sorted keys, so identical state gives identical bytes."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def strict_server(name: str, instructions: str) -> Any:
    """An ``MCPServer`` that checks every call's arguments against the tool's declared inputSchema first.

    Pydantic's lax mode would accept ``"7"`` for an integer; the declared schema does not, and agents and
    verifiers only see the schema. Checking with ``jsonschema`` makes the server exactly as strict as it
    says it is: a violation comes back as an error result (``isError: true``) naming the field.
    """
    import jsonschema
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    class StrictMCPServer(MCPServer):
        async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
            tool = self._tool_manager.get_tool(name)
            if tool is not None:
                errors = jsonschema.Draft202012Validator(tool.parameters).iter_errors(arguments)
                error = jsonschema.exceptions.best_match(errors)
                if error is not None:
                    where = "/".join(str(p) for p in error.absolute_path) or "arguments"
                    raise ToolError(f"invalid arguments for {name}: {where}: {error.message}")
            return await super().call_tool(name, arguments, context)

    # WARNING keeps each tool call from logging a line to the server's stderr.
    return StrictMCPServer(name, version="1.0", instructions=instructions, log_level="WARNING")
