"""VS Code: `servers` in the user `mcp.json` of the Code app-data folder; skill in ~/.agents."""

from __future__ import annotations

from pathlib import Path

from memory.entrypoints.clients.host import Host
from memory.entrypoints.clients.target import (
    ClientTarget, RemoteServer, ServerEntry, ServerLaunch, agents_skill_path,
)

_STDIO_KEYS = frozenset({"command", "args", "env", "envFile", "cwd"})
_HTTP_KEYS = frozenset({"url", "headers"})


def vscode_user_dir(host: Host) -> Path:
    """Linux ~/.config/Code/User, macOS ~/Library/Application Support/Code/User,
    Windows %APPDATA%\\Code\\User."""
    return host.app_data / "Code" / "User"


def vscode_entry(launch: ServerLaunch) -> ServerEntry:
    return ServerEntry(container="servers",
                       fields={"type": "stdio", "command": launch.command,
                               "args": list(launch.args)},
                       drop=_HTTP_KEYS)


def vscode_remote_entry(remote: RemoteServer) -> ServerEntry:
    """`type: http`; VS Code substitutes `${env:VAR}` from its own environment."""
    return ServerEntry.for_url(
        "servers", {"type": "http", "url": remote.url, **remote.header_fields("${env:VAR}")},
        stdio_keys=_STDIO_KEYS)


TARGET = ClientTarget(
    name="vscode",
    title="VS Code",
    config_format="json",
    config_path=lambda host: vscode_user_dir(host) / "mcp.json",
    marker=vscode_user_dir,
    entry=vscode_entry,
    remote_entry=vscode_remote_entry,
    skill_path=agents_skill_path,  # Copilot in VS Code reads ~/.agents/skills/ as personal skills
    check='Command Palette > "MCP: List Servers"',
)
