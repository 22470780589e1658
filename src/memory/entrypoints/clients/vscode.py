"""VS Code: `servers` in the user `mcp.json` of the Code app-data folder."""

from __future__ import annotations

from pathlib import Path

from memory.entrypoints.clients.host import Host
from memory.entrypoints.clients.target import ClientTarget, ServerEntry, ServerLaunch


def vscode_user_dir(host: Host) -> Path:
    """Linux ~/.config/Code/User, macOS ~/Library/Application Support/Code/User,
    Windows %APPDATA%\\Code\\User."""
    return host.app_data / "Code" / "User"


def vscode_entry(launch: ServerLaunch) -> ServerEntry:
    return ServerEntry(container="servers",
                       fields={"type": "stdio", "command": launch.command,
                               "args": list(launch.args)})


TARGET = ClientTarget(
    name="vscode",
    title="VS Code",
    config_format="json",
    config_path=lambda host: vscode_user_dir(host) / "mcp.json",
    marker=vscode_user_dir,
    entry=vscode_entry,
    check='Command Palette > "MCP: List Servers"',
)
