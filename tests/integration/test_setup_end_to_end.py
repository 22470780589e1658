"""`ai-memory setup --install-clients` on an empty HOME: six configs that launch a live server."""

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import anyio
import json5
import pytest

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

CONFIGS = {
    "codex": ".codex/config.toml",
    "claude-code": ".claude.json",
    "claude-desktop": ".config/Claude/claude_desktop_config.json",
    "copilot": ".copilot/mcp-config.json",
    "opencode": ".config/opencode/opencode.json",
    "vscode": ".config/Code/User/mcp.json",
}


def setup(home: Path, root: Path, *extra: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
           "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    env.pop("CODEX_HOME", None)
    env.pop("CLAUDE_CONFIG_DIR", None)
    return subprocess.run([sys.executable, "-m", "memory", "setup", "--memory-root", str(root),
                           *extra], env=env, capture_output=True, text=True, timeout=300)


def launch_of(client: str, path: Path) -> list[str]:
    text = path.read_text()
    if client == "codex":
        entry = tomllib.loads(text)["mcp_servers"]["ai-memory"]
        return [entry["command"], *entry["args"]]
    data = json5.loads(text)
    if client == "opencode":
        entry = data["mcp"]["ai-memory"]
        assert entry["type"] == "local" and entry["enabled"] is True
        return list(entry["command"])
    entry = (data["servers"] if client == "vscode" else data["mcpServers"])["ai-memory"]
    if client in ("claude-code", "vscode"):
        assert entry["type"] == "stdio"
    if client == "copilot":
        assert entry["type"] == "local" and entry["tools"] == ["*"]
    return [entry["command"], *entry["args"]]


async def list_tools(command: list[str]) -> list[str]:
    params = StdioServerParameters(command=command[0], args=command[1:],
                                   env={**os.environ, "HF_HUB_OFFLINE": "1"})
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            return sorted(t.name for t in (await session.list_tools()).tools)


def test_setup_writes_six_live_configs_idempotently_and_uninstalls(tmp_path):
    home, root = tmp_path / "home", tmp_path / "memory"
    home.mkdir()
    first = setup(home, root, "--install-clients", "--skip-index")
    assert first.returncode == 0, first.stderr
    launches = {}
    for client, rel in CONFIGS.items():
        path = home / rel
        assert path.is_file(), f"{client}: {path} missing\n{first.stderr}"
        launches[client] = launch_of(client, path)
    commands = {tuple(c) for c in launches.values()}
    assert len(commands) == 1, launches
    command = list(commands.pop())
    assert Path(command[0]).is_absolute() and os.access(command[0], os.X_OK)
    assert command[1:] == ["serve", "--root", str(root.resolve())]
    tools = anyio.run(list_tools, command)
    assert len(tools) == 8 and all(t.startswith("memory_") for t in tools)

    before = {rel: (home / rel).read_bytes() for rel in CONFIGS.values()}
    second = setup(home, root, "--install-clients", "--skip-index")
    assert second.returncode == 0, second.stderr
    assert {rel: (home / rel).read_bytes() for rel in CONFIGS.values()} == before
    assert "created" not in second.stderr and "updated" not in second.stderr

    gone = setup(home, root, "--install-clients", "--uninstall")
    assert gone.returncode == 0, gone.stderr
    for rel in CONFIGS.values():
        assert not (home / rel).exists(), f"{rel} should be gone: it held only our entry"
    assert not (home / ".claude/skills/ai-memory").exists()


def test_unrelated_entries_survive_and_uninstall_restores_bytes(tmp_path):
    home, root = tmp_path / "home", tmp_path / "memory"
    (home / ".codex").mkdir(parents=True)
    codex = home / ".codex/config.toml"
    original = b'# my settings\nmodel = "o4"\n\n[mcp_servers.other]\ncommand = "other"\nargs = []\n'
    codex.write_bytes(original)
    claude = home / ".claude.json"
    claude_original = json.dumps({"theme": "dark", "mcpServers": {"x": {"command": "x"}}},
                                 indent=2).encode()
    claude.write_bytes(claude_original)
    assert setup(home, root, "--install-clients", "--skip-index",
                 "--clients", "codex,claude-code").returncode == 0
    assert tomllib.loads(codex.read_text())["mcp_servers"]["other"]["command"] == "other"
    assert json.loads(claude.read_text())["mcpServers"]["x"] == {"command": "x"}
    assert setup(home, root, "--clients", "codex,claude-code", "--uninstall").returncode == 0
    assert codex.read_bytes() == original
    assert claude.read_bytes() == claude_original
