"""Claude Code: user-scope `mcpServers` in `~/.claude.json`; skills in `~/.claude/skills/`."""

from __future__ import annotations

from pathlib import Path

from memory.entrypoints.clients.host import Host
from memory.entrypoints.clients.target import (
    SERVER_NAME, ClientTarget, RemoteServer, ServerEntry, ServerLaunch,
)

_STDIO_KEYS = frozenset({"command", "args", "env"})
_HTTP_KEYS = frozenset({"url", "headers", "headersHelper"})


def claude_config_dir(host: Host) -> Path:
    """`$CLAUDE_CONFIG_DIR` moves both `.claude.json` and the skills folder."""
    return host.from_env("CLAUDE_CONFIG_DIR") or host.home / ".claude"


def claude_json(host: Host) -> Path:
    base = host.from_env("CLAUDE_CONFIG_DIR") or host.home
    return base / ".claude.json"


def claude_code_entry(launch: ServerLaunch) -> ServerEntry:
    return ServerEntry(container="mcpServers",
                       fields={"type": "stdio", "command": launch.command,
                               "args": list(launch.args), "env": {}},
                       keep_existing=frozenset({"env"}), drop=_HTTP_KEYS)


def claude_code_remote_entry(remote: RemoteServer) -> ServerEntry:
    """`type: http`; Claude Code expands `${VAR}` in `headers` when it connects."""
    return ServerEntry.for_url(
        "mcpServers", {"type": "http", "url": remote.url, **remote.header_fields("${VAR}")},
        stdio_keys=_STDIO_KEYS)


TARGET = ClientTarget(
    name="claude-code",
    title="Claude Code",
    config_format="json",
    config_path=claude_json,
    marker=claude_config_dir,
    entry=claude_code_entry,
    remote_entry=claude_code_remote_entry,
    skill_path=lambda host: claude_config_dir(host) / "skills" / SERVER_NAME,
    check="claude mcp list (or /mcp inside a session)",
)
