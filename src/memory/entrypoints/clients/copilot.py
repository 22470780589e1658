"""GitHub Copilot CLI: `mcpServers` in `~/.copilot/mcp-config.json`; skill in ~/.agents/skills."""

from __future__ import annotations

from pathlib import Path

from memory.entrypoints.clients.host import Host
from memory.entrypoints.clients.target import (
    SERVER_NAME, ClientTarget, RemoteServer, ServerEntry, ServerLaunch, agents_skill_path,
)

_STDIO_KEYS = frozenset({"command", "args", "env", "cwd"})
_HTTP_KEYS = frozenset({"url", "headers"})


def copilot_home(host: Host) -> Path:
    """`$COPILOT_HOME` moves the config folder (and the skills folder inside it)."""
    return host.from_env("COPILOT_HOME") or host.home / ".copilot"


def copilot_entry(launch: ServerLaunch) -> ServerEntry:
    return ServerEntry(container="mcpServers",
                       fields={"type": "local", "command": launch.command,
                               "args": list(launch.args), "tools": ["*"]},
                       keep_existing=frozenset({"tools"}), drop=_HTTP_KEYS)


def copilot_remote_entry(remote: RemoteServer) -> ServerEntry:
    """`type: http`; Copilot expands `${VAR}` in `headers` (what `copilot mcp add --header`
    writes too)."""
    return ServerEntry.for_url(
        "mcpServers",
        {"type": "http", "url": remote.url, **remote.header_fields("${VAR}"), "tools": ["*"]},
        stdio_keys=_STDIO_KEYS, keep_existing=frozenset({"tools"}))


TARGET = ClientTarget(
    name="copilot",
    title="GitHub Copilot CLI",
    config_format="json",
    config_path=lambda host: copilot_home(host) / "mcp-config.json",
    marker=copilot_home,
    entry=copilot_entry,
    remote_entry=copilot_remote_entry,
    skill_path=agents_skill_path,
    legacy_skill_paths=lambda host: (copilot_home(host) / "skills" / SERVER_NAME,),
    check="/mcp inside a copilot session",
)
