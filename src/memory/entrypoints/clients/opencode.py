"""OpenCode: `mcp` in `~/.config/opencode/opencode.json(c)`; skill in ~/.agents/skills."""

from __future__ import annotations

from pathlib import Path

from memory.entrypoints.clients.host import Host
from memory.entrypoints.clients.target import (
    SERVER_NAME, ClientTarget, ServerEntry, ServerLaunch, agents_skill_path,
)


def opencode_dir(host: Host) -> Path:
    """OpenCode keeps XDG paths on every OS, Windows included."""
    return host.xdg_config / "opencode"


def opencode_config(host: Host) -> Path:
    jsonc = opencode_dir(host) / "opencode.jsonc"
    return jsonc if jsonc.exists() else opencode_dir(host) / "opencode.json"


def opencode_entry(launch: ServerLaunch) -> ServerEntry:
    return ServerEntry(container="mcp",
                       fields={"type": "local", "command": [launch.command, *launch.args],
                               "enabled": True})


TARGET = ClientTarget(
    name="opencode",
    title="OpenCode",
    config_format="json",
    config_path=opencode_config,
    marker=opencode_dir,
    entry=opencode_entry,
    skill_path=agents_skill_path,
    legacy_skill_paths=lambda host: (opencode_dir(host) / "skills" / SERVER_NAME,),
    check="opencode mcp list",
)
