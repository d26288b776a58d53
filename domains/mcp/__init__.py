"""The MCP domain: JSON-RPC ``tools/call`` actions against Model Context Protocol servers.

Importing this package is cheap; nothing here imports the ``mcp`` SDK at module level.
"""
