"""Demo MCP servers with real state, each runnable as ``python -m awctl_domains.mcp.servers.<name>``.

Every server keeps its state in a data directory given by ``--data DIR`` or ``AWCTL_MCP_DATA`` and seeds
it from ``DIR/seed.json`` the first time it starts there, so a server is deterministic given its seed.
"""

#: server name -> module, for task setups and ``McpEnv`` configs.
DEMO_SERVERS: dict[str, str] = {
    "notes": f"{__name__}.notes",
    "shop": f"{__name__}.shop",
    "calendar": f"{__name__}.calendar_server",
}
