"""Codex CLI: `[mcp_servers.ai-memory]` in `$CODEX_HOME/config.toml`; skill in ~/.agents/skills."""

from __future__ import annotations

from pathlib import Path

from memory.entrypoints.clients.host import Host
from memory.entrypoints.clients.target import (
    ClientTarget, RemoteServer, ServerEntry, ServerLaunch, agents_skill_path,
)

# Codex refuses a table holding keys of both transports ("url is not supported for stdio")
_STDIO_KEYS = frozenset({"command", "args", "env", "env_vars", "cwd"})
_HTTP_KEYS = frozenset({"url", "bearer_token_env_var", "http_headers", "env_http_headers"})


def codex_home(host: Host) -> Path:
    return host.from_env("CODEX_HOME") or host.home / ".codex"


def codex_entry(launch: ServerLaunch) -> ServerEntry:
    return ServerEntry(container="mcp_servers",
                       fields={"command": launch.command, "args": list(launch.args)},
                       drop=_HTTP_KEYS)


def codex_remote_entry(remote: RemoteServer) -> ServerEntry:
    """Streamable HTTP: `url`, and `bearer_token_env_var` names the token's variable."""
    bearer = {"bearer_token_env_var": remote.token_env} if remote.token_env else {}
    return ServerEntry.for_url("mcp_servers", {"url": remote.url, **bearer},
                               stdio_keys=_STDIO_KEYS,
                               auth_keys=frozenset({"bearer_token_env_var"}))


TARGET = ClientTarget(
    name="codex",
    title="Codex",
    config_format="toml",
    config_path=lambda host: codex_home(host) / "config.toml",
    marker=codex_home,
    entry=codex_entry,
    remote_entry=codex_remote_entry,
    skill_path=agents_skill_path,  # user scope is $HOME/.agents/skills, CODEX_HOME or not
    check="codex mcp list",
)
