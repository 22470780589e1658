"""`ai-memory daemon` and `ai-memory connect`: every local client through one shared process."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import psutil
import pytest
from anyio.streams.text import TextReceiveStream
from http_harness import cli, git_work_tree, make_root, server_env
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

HEAVY = ["torch", "numpy", "sentence_transformers", "transformers", "onnxruntime", "graphify",
         "networkx", "apsw", "sqlite3", "sqlite_vec", "dependency_injector", "pydantic", "mcp",
         "mcp_types", "anyio", "starlette", "uvicorn", "memory.adapters",
         "memory.entrypoints.container", "memory.application"]


@pytest.fixture(scope="module")
def anyio_backend():
    return "asyncio"


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    root = make_root(tmp_path_factory.mktemp("daemon"))
    yield root
    cli("daemon", "stop", "--root", str(root))


def record(root: Path) -> dict | None:
    path = root / ".ai-memory" / "daemon.json"
    return json.loads(path.read_text()) if path.exists() else None


def daemons_of(root: Path) -> list[psutil.Process]:
    found = []
    for process in psutil.process_iter(["cmdline"]):
        line = process.info["cmdline"] or []
        if "--daemon-record" in line and str(root) in line:
            found.append(process)
    return found


@asynccontextmanager
async def bridged(root: Path, errlog: Path, cwd: Path | None = None, **env: str):
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "memory", "connect", "--root", str(root)],
                                   env=server_env(**env), cwd=str(cwd) if cwd else None)
    with errlog.open("w") as err:
        async with stdio_client(params, errlog=err) as (read, write):
            async with ClientSession(read, write) as session:
                with anyio.fail_after(120):
                    await session.initialize()
                yield session


async def search(session: ClientSession, query: str, **arguments) -> dict:
    with anyio.fail_after(180):
        result = await session.call_tool("memory_search", {"query": query, **arguments})
    assert not result.is_error, result.content
    return result.structured_content


def test_the_bridge_imports_nothing_heavy():
    probe = ("import sys, memory.entrypoints.cli, memory.entrypoints.bridge; "
             f"print([m for m in {HEAVY!r} if m in sys.modules])")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=120, check=True)
    assert done.stdout.strip() == "[]"


@pytest.mark.anyio
async def test_a_raw_client_through_the_bridge_sees_json_rpc_only_and_the_bridge_stays_small(
        root, tmp_path, capsys):
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw-pipe", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "memory_search", "arguments": {"query": "rollback plan"}}},
        {"jsonrpc": "2.0", "id": "four", "method": "ping"},
    ]
    replies: dict = {}
    with (tmp_path / "bridge.stderr").open("w") as err, anyio.fail_after(300):
        process = await anyio.open_process(
            [sys.executable, "-m", "memory", "connect", "--root", str(root)], stderr=err,
            env=server_env())
        async with process:
            stdout, buffer = TextReceiveStream(process.stdout), ""
            for request in requests:
                await process.stdin.send((json.dumps(request) + "\n").encode())
                while "id" in request and request["id"] not in replies:
                    buffer += await stdout.receive()
                    *lines, buffer = buffer.split("\n")
                    for line in lines:
                        message = json.loads(line)  # every line is one JSON-RPC message
                        assert message["jsonrpc"] == "2.0"
                        replies[message.get("id")] = message
            rss_mb = psutil.Process(process.pid).memory_info().rss / 2**20
            await process.stdin.aclose()
            await process.wait()
    with capsys.disabled():
        print(f"\n[bridge] RSS after a search: {rss_mb:.1f} MB", file=sys.stderr)
    assert replies[1]["result"]["serverInfo"]["name"] == "ai-memory"
    assert len(replies[2]["result"]["tools"]) == 10  # the eight tools, memory_write and memory_edit
    assert replies[3]["result"]["structuredContent"]["items"]
    assert replies["four"]["result"] == {}
    assert process.returncode == 0
    assert rss_mb < 80, "the bridge has grown an import of the model stack"


def test_the_2026_revision_goes_through_the_bridge_and_stdin_eof_waits_for_answers(root):
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}
    lines = [{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta}},
             {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
                 "name": "memory_search", "arguments": {"query": "rollback plan"},
                 "_meta": meta}}]
    done = subprocess.run([sys.executable, "-m", "memory", "connect", "--root", str(root)],
                          input="".join(json.dumps(x) + "\n" for x in lines), text=True,
                          capture_output=True, timeout=300, env=server_env())
    replies = {m["id"]: m for m in map(json.loads, done.stdout.splitlines())}
    assert done.returncode == 0, done.stderr
    assert replies[1]["result"]["resultType"] == "complete"
    assert len(replies[1]["result"]["tools"]) == 10
    assert replies[2]["result"]["structuredContent"]["items"]


@pytest.mark.anyio
async def test_two_clients_share_one_daemon_with_their_own_scope(root, tmp_path):
    checkout = git_work_tree(tmp_path / "alpha", "git@github.com:acme/alpha.git")
    async with bridged(root, tmp_path / "a.stderr", cwd=checkout) as one, \
            bridged(root, tmp_path / "b.stderr", AI_MEMORY_REPOSITORY="beta") as two, \
            bridged(root, tmp_path / "c.stderr", cwd=tmp_path) as three:
        a = await search(one, "deploy checklist")
        b = await search(two, "deploy checklist")
        c = await search(three, "deploy checklist")
        assert a["scope"]["inferred"] == {"repository": f"cwd:{checkout} (git-remote:origin)"}
        assert b["scope"]["inferred"] == {"repository": "env:AI_MEMORY_REPOSITORY"}
        assert "inferred" not in c["scope"]
        assert len(daemons_of(root)) == 1
        assert daemons_of(root)[0].pid == record(root)["pid"]


@pytest.mark.anyio
async def test_killing_the_daemon_mid_session_makes_the_next_call_start_it_again(root, tmp_path):
    async with bridged(root, tmp_path / "bridge.stderr") as session:
        assert (await search(session, "rollback plan"))["items"]
        first = record(root)["pid"]
        os.kill(first, signal.SIGKILL)
        with anyio.fail_after(30):
            while psutil.pid_exists(first) and psutil.Process(first).status() != "zombie":
                await anyio.sleep(0.05)
        packet = await search(session, "rollback plan")  # same session, no re-initialize
        assert packet["items"]
        assert record(root)["pid"] != first
        assert [p.pid for p in daemons_of(root)] == [record(root)["pid"]]


def test_daemon_commands_detect_a_stale_record(root):
    cli("daemon", "stop", "--root", str(root))
    assert cli("daemon", "status", "--root", str(root)).returncode == 3
    with socket.socket() as foreign:  # a port that answers, but not as this root's daemon
        foreign.bind(("127.0.0.1", 0))
        foreign.listen()
        stale = {"pid": os.getpid(), "port": foreign.getsockname()[1], "root_id": "x" * 16,
                 "version": "0", "started": time.time()}
        (root / ".ai-memory" / "daemon.json").write_text(json.dumps(stale))
        status = cli("daemon", "status", "--root", str(root))
        assert status.returncode == 3 and "stale" in status.stdout
        started = cli("daemon", "start", "--root", str(root))
    assert started.returncode == 0, started.stderr
    assert record(root)["pid"] != os.getpid()
    assert cli("daemon", "status", "--root", str(root)).returncode == 0
    assert cli("daemon", "start", "--root", str(root)).stdout == started.stdout  # the same one
    stopped = cli("daemon", "stop", "--root", str(root))
    assert stopped.returncode == 0 and "stopped" in stopped.stdout
    assert record(root) is None and not daemons_of(root)
