"""Register the ai-memory MCP server with Codex, Claude, Copilot, OpenCode and VS Code."""

from memory.entrypoints.clients.host import SetupPaths, normalize_platform, setup_paths
from memory.entrypoints.clients.installer import (
    CLIENT_NAMES, TARGETS, ClientResult, install_clients, remote_server, select_targets,
)
from memory.entrypoints.clients.launcher import (
    DISTRIBUTION, Interpreter, LauncherNotFound, server_command,
)
from memory.entrypoints.clients.skill_copy import bundled_skill
from memory.entrypoints.clients.target import (
    SERVER_NAME, ClientTarget, RemoteServer, ServerEntry, ServerLaunch, entry_name,
)

__all__ = [
    "CLIENT_NAMES", "DISTRIBUTION", "SERVER_NAME", "TARGETS", "ClientResult", "ClientTarget",
    "Interpreter", "LauncherNotFound", "RemoteServer", "ServerEntry", "ServerLaunch",
    "SetupPaths", "bundled_skill", "entry_name", "install_clients", "normalize_platform",
    "remote_server", "select_targets", "server_command", "setup_paths",
]
