"""Faults a simulator can be told to inject into MCP observations, each phrased as the real failure looks."""

from __future__ import annotations

from awctl.domain import Perturbation

PERTURBATIONS: list[Perturbation] = [
    Perturbation(
        "rate_limit",
        "every Nth tools/call is rejected by a rate limiter",
        "Every {every}th tools/call request (counting from the first) is rate limited: answer it with "
        '{{"jsonrpc": "2.0", "id": <request id>, "result": {{"content": [{{"type": "text", "text": '
        '"rate limit exceeded: retry after {retry_after_s} seconds"}}], "isError": true}}}} and do not apply it.',
        {"every": 3, "retry_after_s": 5},
    ),
    Perturbation(
        "timeout",
        "the server does not answer in time; the client reports a JSON-RPC timeout error",
        "The server is overloaded: answer the latest request with "
        '{{"jsonrpc": "2.0", "id": <request id>, "error": {{"code": -32001, "message": '
        '"Request timed out after {seconds} seconds"}}}}. Whether the call took effect is unknown to the agent; '
        "treat it as not applied.",
        {"seconds": 30},
    ),
    Perturbation(
        "empty_result",
        "a read tool succeeds but returns no content",
        "The server returns an empty success for the latest call: "
        '{{"jsonrpc": "2.0", "id": <request id>, "result": {{"content": [], "isError": false}}}}.',
    ),
    Perturbation(
        "malformed_output",
        "the tool's output is truncated mid-way, as when a server crashes while writing",
        "The tool's text output is cut off after about {keep_chars} characters (invalid JSON if it was JSON), "
        "still inside a well-formed JSON-RPC response with isError false.",
        {"keep_chars": 40},
    ),
    Perturbation(
        "server_error",
        "the tool fails with an internal error",
        "The tool crashes: answer with an error result whose text is "
        '"Error executing tool <tool name>: {message}" and isError true; nothing changes.',
        {"message": "internal server error"},
    ),
    Perturbation(
        "permission_denied",
        "the server refuses writes under a protected location",
        "Writes touching {target} are refused: answer such calls with an error result whose text is "
        '"Error executing tool <tool name>: permission denied: {target}" and isError true; reads still work.',
        {"target": "the requested path"},
    ),
]
