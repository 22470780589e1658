"""The README's marked command blocks, run as a reader would paste them (a scratch HOME, a
server the test starts): each `<!-- readme-test: NAME -->` block must succeed as written."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from memory.entrypoints.mcp_server import tool_names
from tests.integration.http_harness import http_server, server_env

README = Path(__file__).resolve().parents[2] / "README.md"
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
                          env=server_env(HOME=str(home), **env))


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
