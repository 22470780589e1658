"""`ai-memory setup --install-clients` on an empty HOME: configs that launch a live server."""

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

ALL = "codex,claude-code,claude-desktop,copilot,opencode,vscode"
SKILLS = (".claude/skills/ai-memory", ".agents/skills/ai-memory")
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


def files_under(home: Path) -> set[str]:
    return {p.relative_to(home).as_posix() for p in home.rglob("*") if p.is_file()}


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
    first = setup(home, root, "--install-clients", "--skip-index", "--clients", ALL)
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
    assert len(tools) == 10 and all(t.startswith("memory_") for t in tools)
    for skill in SKILLS:
        assert (home / skill / "SKILL.md").is_file(), f"{skill} missing\n{first.stdout}"

    before = {rel: (home / rel).read_bytes() for rel in CONFIGS.values()}
    second = setup(home, root, "--install-clients", "--skip-index", "--clients", ALL)
    assert second.returncode == 0, second.stderr
    assert {rel: (home / rel).read_bytes() for rel in CONFIGS.values()} == before
    assert second.stdout.count(" unchanged ") == len(CONFIGS) + len(SKILLS), second.stdout

    gone = setup(home, root, "--install-clients", "--uninstall")
    assert gone.returncode == 0, gone.stderr
    for rel in CONFIGS.values():
        assert not (home / rel).exists(), f"{rel} should be gone: it held only our entry"
    for skill in SKILLS:
        assert not (home / skill).exists()


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


def test_without_clients_named_only_the_clients_found_are_registered(tmp_path):
    home, root = tmp_path / "home", tmp_path / "memory"
    home.mkdir()

    nothing = setup(home, root, "--install-clients", "--skip-index")

    assert nothing.returncode == 0, nothing.stderr
    assert files_under(home) == set()
    assert nothing.stdout.count(" skipped ") == len(CONFIGS)
    assert "--clients" in nothing.stderr
    (home / ".codex").mkdir()
    found = setup(home, root, "--install-clients", "--skip-index")
    assert found.returncode == 0, found.stderr
    assert files_under(home) == {".codex/config.toml", ".agents/skills/ai-memory/SKILL.md",
                                 ".agents/skills/ai-memory/references/note-schema.md",
                                 ".agents/skills/ai-memory/references/writing-notes.md"}


def test_a_dry_run_prints_its_plan_on_stdout_and_writes_nothing(tmp_path):
    home, root = tmp_path / "home", tmp_path / "memory"
    home.mkdir()

    plan = setup(home, root, "--install-clients", "--dry-run", "--clients", "codex,vscode")

    assert plan.returncode == 0, plan.stderr
    assert files_under(home) == set() and not root.exists()
    assert f"+++ {home / '.codex/config.toml'}" in plan.stdout
    assert "+[mcp_servers.ai-memory]" in plan.stdout
    assert "+++" not in plan.stderr
    verbose = setup(home, root, "--install-clients", "--dry-run", "--verbose",
                    "--clients", "codex,vscode")
    assert verbose.returncode == 0, verbose.stderr
    assert "+name: ai-memory" in verbose.stdout  # the skill's diff
    assert files_under(home) == set() and not root.exists()


def skill_lines(home: Path, stdout: str) -> dict[str, str]:
    """The dry run's line for each file of the skill copies, by path under home."""
    lines = {}
    for line in stdout.splitlines():
        words = line.split()
        if len(words) >= 2 and words[1].startswith(str(home)) and "/skills/" in words[1] \
                and words[1].endswith(".md"):
            lines[Path(words[1]).relative_to(home).as_posix()] = line.strip()
    return lines


def test_a_dry_run_of_all_clients_gives_the_skill_a_line_per_file_and_verbose_its_diff(tmp_path):
    home, root = tmp_path / "home", tmp_path / "memory"
    home.mkdir()
    shipped = {f"{folder}/{name}" for folder in SKILLS
               for name in ("SKILL.md", "references/note-schema.md", "references/writing-notes.md")}

    plan = setup(home, root, "--dry-run", "--clients", "all")

    assert plan.returncode == 0, plan.stderr
    lines = skill_lines(home, plan.stdout)
    assert set(lines) == shipped
    skill = (Path(__file__).resolve().parents[2] / "src/memory/skills/ai-memory/SKILL.md")
    length = len(skill.read_text(encoding="utf-8").splitlines())
    assert lines[".agents/skills/ai-memory/SKILL.md"].endswith(f"(+{length} -0)")
    assert all(line.startswith("created ") for line in lines.values())
    assert "+name: ai-memory" not in plan.stdout and "--verbose" in plan.stdout
    assert len(plan.stdout.splitlines()) < 150  # it was ~960 with the skill in full
    assert "+[mcp_servers.ai-memory]" in plan.stdout  # the configurations' diffs stay
    assert files_under(home) == set()

    installed = setup(home, root, "--skip-index", "--clients", "codex")
    assert installed.returncode == 0, installed.stderr
    copy = home / ".agents/skills/ai-memory/SKILL.md"
    copy.write_text(copy.read_text(encoding="utf-8").replace(
        "name: ai-memory", "name: ai-memory\nextra: line", 1), encoding="utf-8")
    again = setup(home, root, "--dry-run", "--clients", "codex")
    lines = skill_lines(home, again.stdout)
    assert lines[".agents/skills/ai-memory/SKILL.md"].startswith("changed ")
    assert lines[".agents/skills/ai-memory/SKILL.md"].endswith("(+0 -1)")
    assert lines[".agents/skills/ai-memory/references/note-schema.md"].startswith("unchanged ")
    verbose = setup(home, root, "--dry-run", "--verbose", "--clients", "codex")
    assert "-extra: line" in verbose.stdout


def test_named_roots_are_registered_side_by_side_and_root_is_accepted(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    work, personal = tmp_path / "work", tmp_path / "personal"
    assert setup(home, work, "--install-clients", "--skip-index", "--clients",
                 "codex").returncode == 0
    env = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}
    added = subprocess.run([sys.executable, "-m", "memory", "setup", "--root", str(personal),
                            "--name", "personal", "--install-clients", "--skip-index",
                            "--clients", "codex"], env=env, capture_output=True, text=True,
                           timeout=300)
    assert added.returncode == 0, added.stderr

    servers = tomllib.loads((home / ".codex/config.toml").read_text())["mcp_servers"]
    assert servers["ai-memory"]["args"] == ["serve", "--root", str(work.resolve())]
    assert servers["ai-memory-personal"]["args"] == ["serve", "--root", str(personal.resolve())]
    assert personal.is_dir()
    bad = setup(home, work, "--install-clients", "--skip-index", "--name", "My Notes")
    assert bad.returncode == 2 and "--name" in bad.stderr
