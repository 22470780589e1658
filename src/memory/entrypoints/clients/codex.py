"""Codex CLI: `[mcp_servers.ai-memory]` in `$CODEX_HOME/config.toml`; skill in ~/.agents/skills."""

from __future__ import annotations

from pathlib import Path

from memory.entrypoints.clients.host import Host
from memory.entrypoints.clients.target import (
    ClientTarget, ServerEntry, ServerLaunch, agents_skill_path,
)


def codex_home(host: Host) -> Path:
    return host.from_env("CODEX_HOME") or host.home / ".codex"


def codex_entry(launch: ServerLaunch) -> ServerEntry:
    return ServerEntry(container="mcp_servers",
                       fields={"command": launch.command, "args": list(launch.args)})


TARGET = ClientTarget(
    name="codex",
    title="Codex",
    config_format="toml",
    config_path=lambda host: codex_home(host) / "config.toml",
    marker=codex_home,
    entry=codex_entry,
    skill_path=agents_skill_path,  # user scope is $HOME/.agents/skills, CODEX_HOME or not
    check="codex mcp list",
)
