"""Register the ai-memory MCP server with Codex, Claude, Copilot, OpenCode and VS Code."""

from memory.entrypoints.clients.host import (
    SetupPaths, bundled_skill_dir, installed_command, normalize_platform, setup_paths,
)
from memory.entrypoints.clients.installer import (
    CLIENT_NAMES, TARGETS, ClientResult, install_clients, select_targets,
)
from memory.entrypoints.clients.target import SERVER_NAME, ClientTarget, ServerEntry, ServerLaunch

__all__ = [
    "CLIENT_NAMES", "SERVER_NAME", "TARGETS", "ClientResult", "ClientTarget", "ServerEntry",
    "ServerLaunch", "SetupPaths", "bundled_skill_dir", "install_clients", "installed_command",
    "normalize_platform", "select_targets", "setup_paths",
]
