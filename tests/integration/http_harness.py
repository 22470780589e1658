"""Shared by the HTTP server tests: a refreshed root, `serve --http` as a subprocess, SDK sessions."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from textwrap import dedent

import anyio
import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp_types import ListRootsResult, Root

OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
SCOPE_ENV = ("AI_MEMORY_REPOSITORY", "AI_MEMORY_AUTO_SCOPE", "AI_MEMORY_ROOT",
             "AI_MEMORY_STATE_DIR")
SERVING = re.compile(r"serving .* at (?P<url>http://\S+/mcp)")

NOTES = {
    "Repos/alpha/_repo.md": "# alpha\n\nThe alpha service.\n",
    "Repos/alpha/Notes/Deploy.md": """\
        # Deploying alpha

        The deploy checklist for alpha: run the canary, then promote with the pipeline.
        """,
    "Repos/beta/_repo.md": "# beta\n\nThe beta service.\n",
    "Repos/beta/Notes/Deploy.md": """\
        ---
        memory_id: beta-deploy
        related: ["[[Deploys]]"]
        ---
        # Deploying beta

        The deploy checklist for beta: copy the jar by hand and restart the service.
        """,
    "Decisions/Deploys.md": """\
        # Deploys

        Every deploy follows a deploy checklist and has a rollback plan.
        """,
}


def server_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in SCOPE_ENV}
    return {**env, **OFFLINE, **extra}


def cli(*args: str, timeout: float = 600, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memory", *args], capture_output=True,
                          text=True, timeout=timeout, env=server_env(**env))


def make_root(base: Path) -> Path:
    root = base / "memory"
    for rel, text in NOTES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dedent(text), encoding="utf-8")
    done = cli("refresh", "--mode", "full", "--root", str(root))
    assert done.returncode == 0, done.stderr[-3000:]
    return root


class Running:
    """A `serve --http` process: its URL, its stderr log, the process itself."""

    def __init__(self, process: subprocess.Popen, url: str, errlog: Path, root: Path):
        self.process = process
        self.url = url
        self.errlog = errlog
        self.root = root

    @property
    def owner(self) -> dict[str, str]:
        """The header of the owner's local credential (what `ai-memory connect` sends)."""
        secret = (self.root / ".ai-memory" / "local-token").read_text(encoding="ascii").strip()
        return {"Authorization": f"Bearer {secret}"}

    @property
    def log(self) -> str:
        return self.errlog.read_text(encoding="utf-8", errors="replace")


@contextmanager
def http_server(root: Path, errlog: Path, *flags: str, bind: str = "127.0.0.1:0",
                env: dict[str, str] | None = None, cwd: Path | None = None):
    """`ai-memory serve --root ROOT --http BIND FLAGS...` until the block ends."""
    command = [sys.executable, "-m", "memory", "serve", "--root", str(root), "--http", bind,
               *flags]
    with errlog.open("w") as err:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=err,
                                   env=env or server_env(), cwd=str(cwd) if cwd else None)
        try:
            yield Running(process, _wait_for_url(process, errlog), errlog, root)
        finally:
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _wait_for_url(process: subprocess.Popen, errlog: Path, timeout: float = 60) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        match = SERVING.search(errlog.read_text(encoding="utf-8", errors="replace"))
        if match:
            return match.group("url")
        if process.poll() is not None:
            raise AssertionError(f"serve --http exited {process.returncode}:\n{errlog.read_text()}")
        time.sleep(0.1)
    raise AssertionError(f"serve --http did not start:\n{errlog.read_text()}")


@asynccontextmanager
async def mcp_session(url: str, *, headers: dict[str, str] | None = None,
                      roots: list[Path] | None = None):
    """An initialized SDK ClientSession over Streamable HTTP; `roots` may change meanwhile."""
    callback = None
    if roots is not None:
        async def callback(context):
            return ListRootsResult(roots=[Root(uri=p.as_uri(), name=p.name) for p in roots])
    client = httpx2.AsyncClient(headers=headers or {},
                                timeout=httpx2.Timeout(30, read=300))
    async with client, streamable_http_client(url, http_client=client) as (read, write):
        async with ClientSession(read, write, list_roots_callback=callback) as session:
            with anyio.fail_after(60):
                await session.initialize()
            yield session


def git_work_tree(folder: Path, remote: str) -> Path:
    folder.mkdir(parents=True)
    git = ["git", "-C", str(folder)]
    subprocess.run([*git, "init", "-q"], check=True, timeout=30)
    subprocess.run([*git, "remote", "add", "origin", remote], check=True, timeout=30)
    return folder
