"""The MCP server over Streamable HTTP: one process, many client sessions, optional authentication."""
