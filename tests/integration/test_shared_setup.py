"""`setup --shared`: the entries two different clients get lead to one daemon of the root (one
process holding the model and the watcher), which the next call starts again once killed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tomllib
from contextlib import AsyncExitStack
from pathlib import Path

import anyio
import psutil
import pytest
from http_harness import server_env
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from test_daemon_bridge import (  # noqa: F401 (anyio_backend and root are fixtures)
    anyio_backend, daemons_of, record, root, search,
)
from test_parallel_search import wait_for_model

pytestmark = pytest.mark.skipif(not Path("/proc/self/maps").exists(),
                                reason="reads /proc to see which process holds what")


def setup_shared(home: Path, root: Path, clients: str) -> subprocess.CompletedProcess:
    home.mkdir(exist_ok=True)
    env = server_env(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"))
    for name in ("CODEX_HOME", "CLAUDE_CONFIG_DIR", "COPILOT_HOME"):
        env.pop(name, None)
    return subprocess.run([sys.executable, "-m", "memory", "setup", "--root", str(root),
                           "--shared", "--clients", clients, "--skip-index"],
                          env=env, capture_output=True, text=True, timeout=300)


def codex_launch(home: Path) -> list[str]:
    entry = tomllib.loads((home / ".codex" / "config.toml").read_text())["mcp_servers"]
    return [entry["ai-memory"]["command"], *entry["ai-memory"]["args"]]


def opencode_launch(home: Path) -> list[str]:
    config = json.loads((home / ".config" / "opencode" / "opencode.json").read_text())
    return list(config["mcp"]["ai-memory"]["command"])


async def session_of(stack: AsyncExitStack, launch: list[str], errlog: Path) -> ClientSession:
    """An MCP session with the process a client would start from its entry."""
    params = StdioServerParameters(command=launch[0], args=launch[1:], env=server_env())
    err = stack.enter_context(errlog.open("w"))
    read, write = await stack.enter_async_context(stdio_client(params, errlog=err))
    session = await stack.enter_async_context(ClientSession(read, write))
    with anyio.fail_after(120):
        await session.initialize()
    return session


def bridges_of(root: Path) -> list[psutil.Process]:
    return [p for p in psutil.process_iter(["cmdline"])
            if "connect" in (p.info["cmdline"] or []) and str(root) in p.info["cmdline"]]


def maps_model_runtime(pid: int) -> bool:
    return "onnxruntime" in Path(f"/proc/{pid}/maps").read_text()


def watches_files(pid: int) -> bool:
    """The process holds an inotify instance (watchfiles' watcher on Linux)."""
    fds = Path(f"/proc/{pid}/fd")
    return any(os.readlink(fd) == "anon_inode:inotify" for fd in fds.iterdir())


async def killed(pid: int) -> None:
    os.kill(pid, signal.SIGKILL)
    with anyio.fail_after(30):
        while psutil.pid_exists(pid) and psutil.Process(pid).status() != "zombie":
            await anyio.sleep(0.05)


@pytest.mark.anyio
async def test_two_clients_entries_share_one_daemon_which_the_next_call_restarts(root,
                                                                                 tmp_path):
    home = tmp_path / "home"
    done = setup_shared(home, root, "codex,opencode")
    assert done.returncode == 0, done.stderr
    codex, opencode = codex_launch(home), opencode_launch(home)
    assert codex == opencode == [codex[0], "connect", "--root", str(root)]
    assert Path(codex[0]).is_absolute() and Path(codex[0]).is_file()

    async with AsyncExitStack() as stack:
        a = await session_of(stack, codex, tmp_path / "codex.stderr")
        b = await session_of(stack, opencode, tmp_path / "opencode.stderr")
        assert (await search(a, "deploy checklist"))["items"]
        assert (await search(b, "rollback plan"))["items"]
        await wait_for_model(a)
        await wait_for_model(b)

        [daemon] = daemons_of(root)
        assert daemon.pid == record(root)["pid"]
        bridges = [p.pid for p in bridges_of(root)]
        assert len(bridges) == 2
        processes = [daemon.pid, *bridges]
        assert [pid for pid in processes if maps_model_runtime(pid)] == [daemon.pid]
        assert [pid for pid in processes if watches_files(pid)] == [daemon.pid]

        await killed(daemon.pid)
        assert (await search(a, "deploy checklist"))["items"]  # same sessions, no new handshake
        restarted = record(root)["pid"]
        assert restarted != daemon.pid
        assert (await search(b, "deploy checklist"))["items"]
        assert [p.pid for p in daemons_of(root)] == [restarted] == [record(root)["pid"]]
