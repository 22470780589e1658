"""`ai-memory setup --url` (a team server) and `--shared` from the command line, on an empty
HOME; the clients' CLIs (the real ones where installed, else stand-ins that read the client's
configuration as it documents it) must read our entries as we meant them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from client_standins import client_cli
from http_harness import server_env
from test_setup_end_to_end import CONFIGS

URL = "https://memory.example.com/mcp"
# Where scripts/check_clients.sh (or you) installed the clients' CLIs; else PATH.
CLI_FOLDER = os.environ.get("AI_MEMORY_CLIENT_BIN")


def environment(home: Path, **extra: str) -> dict[str, str]:
    env = server_env(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), **extra)
    for name in ("CODEX_HOME", "CLAUDE_CONFIG_DIR", "COPILOT_HOME", "AI_MEMORY_TOKEN"):
        env.pop(name, None)
    if CLI_FOLDER:
        env["PATH"] = CLI_FOLDER + os.pathsep + env.get("PATH", "")
    return env


def setup(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    home.mkdir(exist_ok=True)
    return subprocess.run([sys.executable, "-m", "memory", "setup", *args],
                          env=environment(home, **env), capture_output=True, text=True,
                          timeout=300)


def files_under(home: Path) -> dict[str, bytes]:
    return {p.relative_to(home).as_posix(): p.read_bytes() for p in home.rglob("*")
            if p.is_file()}


def servers(home: Path, client: str) -> dict:
    text = (home / CONFIGS[client]).read_text()
    if client == "codex":
        return tomllib.loads(text)["mcp_servers"]
    data = json.loads(text)
    return data[{"opencode": "mcp", "vscode": "servers"}.get(client, "mcpServers")]


def test_url_registers_every_client_without_a_local_root_and_says_where_the_token_must_be(
        tmp_path):
    home = tmp_path / "home"

    done = setup(home, "--url", URL, "--token-env", "AI_MEMORY_TOKEN", "--name", "team",
                 "--clients", "all")

    assert done.returncode == 0, done.stderr
    assert not (home / "AI-Memory").exists() and "memory root" not in done.stderr
    assert all(URL in json.dumps(servers(home, c)["ai-memory-team"]) for c in CONFIGS)
    assert "$AI_MEMORY_TOKEN is not set here" in done.stderr
    assert "stdio bridge" in done.stdout  # Claude Desktop's line says what it got instead


def test_a_remote_url_without_a_token_variable_is_told_how_to_pass_one(tmp_path):
    done = setup(tmp_path / "home", "--url", URL, "--clients", "codex")

    assert done.returncode == 0, done.stderr
    assert f"setup --url {URL} --token-env AI_MEMORY_TOKEN" in done.stderr
    assert "not set here" not in done.stderr


def test_a_url_on_this_machine_needs_no_token_and_gets_no_note(tmp_path):
    done = setup(tmp_path / "home", "--url", "http://127.0.0.1:8765/mcp", "--clients", "codex")

    assert done.returncode == 0, done.stderr
    assert "note:" not in done.stderr


@pytest.mark.parametrize("args, message", [
    (["--token-env", "AI_MEMORY_TOKEN", "--clients", "codex"], "add --url"),
    (["--url", URL, "--root", "memory", "--clients", "codex"], "give one of them"),
    (["--url", URL, "--shared", "--clients", "codex"], "not allowed with"),
    (["--url", "memory.example.com", "--clients", "codex"], "http:// or https://"),
    (["--url", URL, "--token-env", "aim_x_y", "--clients", "codex"], "not the token itself"),
])
def test_contradictory_or_bad_flags_exit_2_and_create_nothing(tmp_path, args, message):
    home = tmp_path / "home"

    done = setup(home, *args)

    assert done.returncode == 2
    assert message in done.stderr
    assert files_under(home) == {}


def test_a_dry_run_of_url_prints_the_plan_on_stdout_and_uninstall_removes_it(tmp_path):
    home = tmp_path / "home"
    plan = setup(home, "--url", URL, "--token-env", "T", "--clients", "all", "--dry-run")
    assert plan.returncode == 0, plan.stderr
    assert '"Authorization": "Bearer ${env:T}"' in plan.stdout  # VS Code's diff
    assert 'bearer_token_env_var = "T"' in plan.stdout  # Codex's
    assert files_under(home) == {}

    assert setup(home, "--url", URL, "--token-env", "T", "--clients", "all").returncode == 0
    gone = setup(home, "--uninstall", "--clients", "all")

    assert gone.returncode == 0, gone.stderr
    assert files_under(home) == {}


# -- the clients' own CLIs (scripts/check_clients.sh installs all four), else stand-ins -----

def describe(home: Path, *command: str) -> dict:
    done = subprocess.run(list(command), env=environment(home), capture_output=True,
                          text=True, timeout=120, cwd=home)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def test_codex_reads_our_url_and_shared_entries_as_we_meant_them(tmp_path):
    codex = client_cli("codex", tmp_path / "bin", CLI_FOLDER)
    home = tmp_path / "home"
    assert setup(home, "--url", URL, "--token-env", "AI_MEMORY_TOKEN", "--name", "team",
                 "--clients", "codex").returncode == 0
    assert setup(home, "--root", str(tmp_path / "memory"), "--shared", "--skip-index",
                 "--clients", "codex").returncode == 0

    team = describe(home, codex, "mcp", "get", "ai-memory-team", "--json")["transport"]
    local = describe(home, codex, "mcp", "get", "ai-memory", "--json")["transport"]

    assert team["type"] == "streamable_http" and team["url"] == URL
    assert team["bearer_token_env_var"] == "AI_MEMORY_TOKEN"
    assert local["type"] == "stdio"
    assert local["args"] == ["connect", "--root", str((tmp_path / "memory").resolve())]


def test_copilot_reads_our_url_entry_with_the_token_left_to_its_variable(tmp_path):
    copilot = client_cli("copilot", tmp_path / "bin", CLI_FOLDER)
    home = tmp_path / "home"
    assert setup(home, "--url", URL, "--token-env", "AI_MEMORY_TOKEN",
                 "--clients", "copilot").returncode == 0

    entry = describe(home, copilot, "mcp", "get", "ai-memory", "--json")["ai-memory"]

    assert entry["type"] == "http" and entry["url"] == URL and entry["enabled"] is True
    assert entry["headers"] == {"Authorization": "Bearer ${AI_MEMORY_TOKEN}"}


@pytest.mark.parametrize("client", ["codex", "copilot"])
def test_after_uninstall_the_client_no_longer_finds_our_entry(tmp_path, client):
    cli = client_cli(client, tmp_path / "bin", CLI_FOLDER)
    home = tmp_path / "home"
    assert setup(home, "--url", URL, "--token-env", "T", "--clients", client).returncode == 0
    found = subprocess.run([cli, "mcp", "get", "ai-memory", "--json"], env=environment(home),
                           capture_output=True, text=True, timeout=120, cwd=home)
    assert found.returncode == 0 and URL in found.stdout, found.stdout + found.stderr

    assert setup(home, "--uninstall", "--clients", client).returncode == 0
    gone = subprocess.run([cli, "mcp", "get", "ai-memory", "--json"], env=environment(home),
                          capture_output=True, text=True, timeout=120, cwd=home)

    assert gone.returncode != 0 and URL not in gone.stdout
