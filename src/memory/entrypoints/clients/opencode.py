"""OpenCode: `mcp` in `~/.config/opencode/opencode.json(c)`; skill in ~/.agents/skills."""

from __future__ import annotations

from pathlib import Path

from memory.entrypoints.clients.host import Host
from memory.entrypoints.clients.target import (
    SERVER_NAME, ClientTarget, RemoteServer, ServerEntry, ServerLaunch, agents_skill_path,
)

# OpenCode's schema allows no unknown key in either form (additionalProperties: false)
_LOCAL_KEYS = frozenset({"command", "environment", "cwd"})
_REMOTE_KEYS = frozenset({"url", "headers", "oauth"})


def opencode_dir(host: Host) -> Path:
    """OpenCode keeps XDG paths on every OS, Windows included."""
    return host.xdg_config / "opencode"


def opencode_config(host: Host) -> Path:
    jsonc = opencode_dir(host) / "opencode.jsonc"
    return jsonc if jsonc.exists() else opencode_dir(host) / "opencode.json"


def opencode_entry(launch: ServerLaunch) -> ServerEntry:
    return ServerEntry(container="mcp",
                       fields={"type": "local", "command": [launch.command, *launch.args],
                               "enabled": True},
                       drop=_REMOTE_KEYS)


def opencode_remote_entry(remote: RemoteServer) -> ServerEntry:
    """`type: remote`; OpenCode substitutes `{env:VAR}` in its config. With a token, OAuth
    discovery is switched off (`oauth: false`), as OpenCode's docs say for API-key servers."""
    auth = remote.header_fields("{env:VAR}")
    fields = {"type": "remote", "url": remote.url, "enabled": True,
              **auth, **({"oauth": False} if auth else {})}
    return ServerEntry.for_url("mcp", fields, stdio_keys=_LOCAL_KEYS,
                               auth_keys=frozenset({"headers", "oauth"}))


TARGET = ClientTarget(
    name="opencode",
    title="OpenCode",
    config_format="json",
    config_path=opencode_config,
    marker=opencode_dir,
    entry=opencode_entry,
    remote_entry=opencode_remote_entry,
    skill_path=agents_skill_path,
    legacy_skill_paths=lambda host: (opencode_dir(host) / "skills" / SERVER_NAME,),
    check="opencode mcp list",
)
