"""The README's marked command blocks, run as a reader would paste them (a scratch HOME, a
server the test starts): each `<!-- readme-test: NAME -->` block must succeed as written."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import memory
from memory.entrypoints.mcp_server import tool_names
from tests.integration.http_harness import http_server, server_env

README = Path(__file__).resolve().parents[2] / "README.md"
CODE = Path(memory.__file__).resolve().parents[1]  # the code under test, whatever the cwd
MARKED = re.compile(r"<!-- readme-test: (?P<name>[\w-]+) -->\n```bash\n(?P<body>.*?)\n```",
                    re.DOTALL)


def readme_block(name: str) -> str:
    """The fenced bash block right after the README's `<!-- readme-test: NAME -->` marker."""
    blocks = {m["name"]: m["body"] for m in MARKED.finditer(README.read_text(encoding="utf-8"))}
    assert name in blocks, f"README.md has no block marked readme-test: {name}"
    return blocks[name]


def run_block(name: str, home: Path, **env: str) -> subprocess.CompletedProcess:
    home.mkdir(exist_ok=True)
    return subprocess.run(["bash", "-euo", "pipefail", "-c", readme_block(name)],
                          capture_output=True, text=True, timeout=120, cwd=home,
                          env=server_env(HOME=str(home), PYTHONPATH=str(CODE), **env))


def test_the_http_smoke_test_initializes_a_session_and_lists_every_tool(tmp_path):
    root = tmp_path / "memory"
    root.mkdir()
    (root / "Deploys.md").write_text("# Deploys\n\nEvery deploy has a rollback plan.\n")

    # `curl -f` fails the block on any HTTP error: a missing credential (401), a foreign
    # Host (403), a request without the Accept header or the session id (406, 400).
    with http_server(root, tmp_path / "serve.log") as server:  # --auth local, a free port
        done = run_block("http-smoke", tmp_path / "home", ROOT=str(root), URL=server.url)

        assert done.returncode == 0, f"{done.stdout}\n{done.stderr}\n{server.log[-3000:]}"
        listed = re.findall(r'"name":"(memory_[a-z]*)"', done.stdout)
        assert sorted(listed) == sorted(tool_names())


def test_the_first_use_commands_run_in_order_on_an_empty_home(tmp_path):
    # `ai-memory` on PATH, as an install puts it there, running this checkout's code.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    launcher = bin_dir / "ai-memory"
    launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m memory "$@"\n')
    launcher.chmod(0o755)
    home = tmp_path / "home"

    done = run_block("first-use", home, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
                     XDG_CONFIG_HOME=str(home / ".config"))

    assert done.returncode == 0, f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    root = home / "AI-Memory"
    assert f"memory root: {root} (created)" in done.stderr
    assert "written: Workflows/release-checklist.md" in done.stdout
    assert "edited: Workflows/release-checklist.md" in done.stdout
    note = (root / "Workflows" / "release-checklist.md").read_text(encoding="utf-8")
    assert "## After\nAnnounce it in the release channel." in note
    last_search = done.stdout.split("edited: ", 1)[1]
    assert "Workflows/release-checklist.md:L" in last_search  # found right after the edit
    assert done.stdout.rstrip().splitlines()[-1].startswith("writes: on")  # health, healthy
    assert f"healthy: {root}" in last_search
