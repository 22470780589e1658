"""Entrypoints: composition root, MCP stdio server, CLI and client installer."""
