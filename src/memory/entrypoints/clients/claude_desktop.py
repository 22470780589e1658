"""Claude Desktop: `mcpServers` in `claude_desktop_config.json` in the app-data folder."""

from __future__ import annotations

from pathlib import Path

from memory.entrypoints.clients.host import Host
from memory.entrypoints.clients.target import ClientTarget, ServerEntry, ServerLaunch


def claude_desktop_dir(host: Host) -> Path:
    """macOS ~/Library/Application Support/Claude, Windows %APPDATA%\\Claude,
    Linux ~/.config/Claude."""
    return host.app_data / "Claude"


def claude_desktop_entry(launch: ServerLaunch) -> ServerEntry:
    return ServerEntry(container="mcpServers",
                       fields={"command": launch.command, "args": list(launch.args)})


TARGET = ClientTarget(
    name="claude-desktop",
    title="Claude Desktop",
    config_format="json",
    config_path=lambda host: claude_desktop_dir(host) / "claude_desktop_config.json",
    marker=claude_desktop_dir,
    entry=claude_desktop_entry,
    check="restart Claude Desktop, then Settings > Developer (or the tools icon in a chat)",
)
