"""Protocol details of a real `ai-memory serve`: cancel, unknown tools, lines it cannot parse,
and what the first search says while the index is being built.

Cancel and unparsable lines are driven by raw JSON-RPC lines on the server's stdin: only the
wire shows what the server sent after a cancel (the SDK's client drops notifications of a
request it gave up), and the SDK's client cannot send a broken line.
"""

from __future__ import annotations

import json
import os
import queue
import random
import subprocess
import sys
import threading
import time
from pathlib import Path

import anyio
import pytest
from filelock import FileLock
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError
from processes import graph_workers

OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
WAIT_S = 300.0  # hang guard for one answer on a loaded machine, not a timing assertion


@pytest.fixture(scope="module")
def anyio_backend():
    return "asyncio"


def env() -> dict[str, str]:
    drop = ("AI_MEMORY_ROOT", "AI_MEMORY_STATE_DIR", "AI_MEMORY_REPOSITORY")
    return {**{k: v for k, v in os.environ.items() if k not in drop}, **OFFLINE}


def cli(root: Path, *args: str) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "memory", *args, "--root", str(root)],
                          capture_output=True, text=True, timeout=900, env=env())
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def write_notes(root: Path, folder: str, count: int, parts: int = 1, seed: int = 0) -> None:
    """Notes of made-up words: no embedding cache holds their vectors yet."""
    rng = random.Random(seed)
    vocabulary = ["".join(rng.choice("bcdfghklmnprstvz") + rng.choice("aeiou")
                          for _ in range(3)) for _ in range(4000)]
    (root / folder).mkdir(parents=True, exist_ok=True)
    for i in range(count):
        body = "\n\n".join(f"## Part {j}\n\n" + " ".join(rng.sample(vocabulary, 40))
                           for j in range(parts))
        (root / folder / f"note-{i:04}.md").write_text(f"# {folder} {i}\n\n{body}\n",
                                                       encoding="utf-8")


class RawServer:
    """`ai-memory serve --no-watch` spoken to in JSON-RPC lines; every message it sends is kept."""

    def __init__(self, root: Path, errlog: Path):
        self._err = errlog.open("w")
        self.errlog = errlog
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "memory", "serve", "--no-watch", "--root", str(root)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._err, env=env())
        self._inbox: queue.Queue = queue.Queue()
        self.received: list[dict] = []
        self._next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self._inbox.put(json.loads(line))

    def send_line(self, line: str) -> None:
        self.proc.stdin.write(line.encode("utf-8", "surrogatepass") + b"\n")
        self.proc.stdin.flush()

    def send(self, message: dict) -> None:
        self.send_line(json.dumps(message))

    def request(self, method: str, params: dict | None = None) -> int:
        self._next_id += 1
        self.send({"jsonrpc": "2.0", "id": self._next_id, "method": method,
                   **({"params": params} if params is not None else {})})
        return self._next_id

    def wait_for(self, wanted, timeout: float = WAIT_S) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            try:
                message = self._inbox.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no such message after {timeout:g}s; last: "
                                     f"{self.received[-3:]}\n{self.errlog.read_text()[-2000:]}")
            self.received.append(message)
            if wanted(message):
                return message

    def answer(self, request_id: int, timeout: float = WAIT_S) -> dict:
        return self.wait_for(lambda m: m.get("id") == request_id and "method" not in m, timeout)

    def call(self, tool: str, **arguments) -> dict:
        reply = self.answer(self.request("tools/call", {"name": tool, "arguments": arguments}))
        assert "result" in reply, reply
        return reply["result"]

    def initialize(self) -> None:
        self.answer(self.request("initialize", {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw-test", "version": "1"}}), 120)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def close(self) -> None:
        self.proc.stdin.close()
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._err.close()


def started(root: Path, logs: Path) -> RawServer:
    server = RawServer(root, logs / "serve.stderr")
    server.initialize()
    return server


@pytest.fixture
def raw(tmp_path_factory, protocol_root):
    server = started(protocol_root, tmp_path_factory.mktemp("logs"))
    yield server
    server.close()


@pytest.fixture(scope="module")
def raw_shared(tmp_path_factory, protocol_root):
    """One server for the lines it cannot parse: each must leave it able to answer."""
    server = started(protocol_root, tmp_path_factory.mktemp("logs"))
    yield server
    server.close()


@pytest.fixture(scope="module")
def protocol_root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("protocol") / "memory"
    write_notes(root, "Base", 3)
    cli(root, "refresh", "--mode", "full")
    # Not indexed yet, so that a refresh has minutes of embedding ahead of it.
    write_notes(root, "Notes", 300, parts=8, seed=random.SystemRandom().randrange(10**9))
    return root


# -- lines the transport cannot parse --------------------------------------------------------

UNPARSABLE = [
    ("cut-line", '{"jsonrpc":"2.0","id":71,"method":"tools/call","params":{"name":', 71, -32700),
    ("lone-surrogate", '{"jsonrpc":"2.0","id":72,"method":"tools/call","params":{"name":'
     '"memory_search","arguments":{"query":"deploy \\ud83d"}}}', 72, -32600),
    ("5000-digit-number", '{"jsonrpc":"2.0","id":"n-73","method":"tools/call","params":{"name":'
     '"memory_search","arguments":{"query":"x","limit":' + "9" * 5000 + '}}}', "n-73", -32600),
    ("not-an-object", "[1, 2, 3]", None, -32600),
    ("not-json", "hello there", None, -32700),
    ("no-version", '{"id":74,"method":"ping"}', 74, -32600),
]


@pytest.mark.parametrize("line,request_id,code", [u[1:] for u in UNPARSABLE],
                         ids=[u[0] for u in UNPARSABLE])
def test_a_line_the_transport_cannot_parse_gets_a_json_rpc_error(raw_shared, line, request_id,
                                                                 code):
    raw = raw_shared
    raw.send_line(line)
    reply = raw.wait_for(lambda m: "error" in m, 60)
    assert reply["id"] == request_id and reply["error"]["code"] == code, reply
    assert "\n" not in reply["error"]["message"] and len(reply["error"]["message"]) <= 300
    assert raw.answer(raw.request("ping"), 60) == {"jsonrpc": "2.0", "id": raw._next_id,
                                                   "result": {}}  # and the server lives on
    found = raw.call("memory_search", query="Base note")
    assert not found.get("isError"), found


# -- unknown tools ---------------------------------------------------------------------------

@pytest.mark.anyio
async def test_an_unknown_tool_is_a_json_rpc_error_not_a_tool_result(protocol_root, tmp_path):
    params = StdioServerParameters(command=sys.executable, env=env(), args=[
        "-m", "memory", "serve", "--no-watch", "--root", str(protocol_root)])
    with (tmp_path / "serve.stderr").open("w") as err:
        async with stdio_client(params, errlog=err) as (read, write):
            async with ClientSession(read, write) as session:
                with anyio.fail_after(WAIT_S):
                    await session.initialize()
                    with pytest.raises(MCPError) as raised:
                        await session.call_tool("memory_teleport", {"to": "mars"})
                    health = await session.call_tool("memory_health", {})
    assert raised.value.error.code == -32602
    assert "unknown tool 'memory_teleport'" in raised.value.error.message
    assert "memory_search" in raised.value.error.message  # it names the tools there are
    assert not health.is_error


# -- cancel ------------------------------------------------------------------------------------

def published(raw: RawServer) -> tuple[str, str]:
    health = raw.call("memory_health")["structuredContent"]
    return health["index"]["generation"]["id"], health["graph"]["generation"]["id"]


@pytest.mark.parametrize("mode,stage", [("index", "index"), ("full", "graph")])
def test_cancelling_a_running_refresh_stops_it_and_the_last_good_generations_serve(
        raw, protocol_root, mode, stage, capsys):
    state = protocol_root / ".ai-memory"
    before = published(raw)
    refresh = raw.request("tools/call", {"name": "memory_refresh",
                                         "arguments": {"mode": mode, "force": True},
                                         "_meta": {"progressToken": "refresh"}})
    raw.wait_for(lambda m: m.get("method") == "notifications/progress"
                 and m["params"]["message"].startswith(f"{stage}: "))
    cancelled_at = time.monotonic()
    raw.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
              "params": {"requestId": refresh, "reason": "the user pressed stop"}})
    # The server reads its input in order: once the ping is answered, the cancel was seen.
    ping = raw.request("ping")
    raw.answer(ping)
    seen_cancel = len(raw.received)
    with FileLock(str(state / "locks" / "refresh.lock"), timeout=WAIT_S):
        pass  # the refresh let go of the lock
    with capsys.disabled():
        print(f"\n[cancel] {stage} stage: lock free {time.monotonic() - cancelled_at:.2f} s "
              "after the cancel", file=sys.stderr)
    assert published(raw) == before
    after_cancel = raw.received[seen_cancel:]
    assert not [m for m in after_cancel if m.get("method") == "notifications/progress"]
    assert not [m for m in raw.received if m.get("id") == refresh]  # never answered
    assert not list((state / "graph" / "staging").iterdir())
    assert not list((state / "index" / "staging").iterdir())
    assert not (state / "refresh-progress.json").exists()
    assert not graph_workers(state)
    assert "Traceback" not in raw.errlog.read_text()


# -- the first search while the index is being built -----------------------------------------

@pytest.mark.anyio
async def test_a_search_while_another_process_builds_the_index_says_how_far_it_is(tmp_path):
    root = tmp_path / "memory"
    write_notes(root, "Notes", 300, parts=2, seed=random.SystemRandom().randrange(10**9))
    params = StdioServerParameters(command=sys.executable, env=env(), args=[
        "-m", "memory", "serve", "--no-watch", "--root", str(root)])
    progress = root / ".ai-memory" / "refresh-progress.json"
    with (tmp_path / "serve.stderr").open("w") as err:
        async with stdio_client(params, errlog=err) as (read, write):
            async with ClientSession(read, write) as session:
                with anyio.fail_after(WAIT_S):
                    await session.initialize()
                    await session.call_tool("memory_health", {})  # the service is built
                    builder = subprocess.Popen(
                        [sys.executable, "-m", "memory", "refresh", "--root", str(root)],
                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env())
                    while not _indexing(progress):
                        assert builder.poll() is None, builder.stderr.read()[-2000:]
                        await anyio.sleep(0.05)
                    during = (await session.call_tool(
                        "memory_search", {"query": "Notes 12"})).structured_content
                    assert await anyio.to_thread.run_sync(builder.wait) == 0
                    after = (await session.call_tool(
                        "memory_search", {"query": "Notes 12"})).structured_content
    assert during["freshness"] == "not-indexed"
    building = [w for w in during["warnings"] if w.startswith("index being built: ")]
    assert building and " of 300 notes, by process " in building[0], during["warnings"]
    assert after["freshness"] in ("current", "refreshed-before-search")
    assert after["items"] and not any("being built" in w for w in after["warnings"])
    assert not progress.exists()


def _indexing(progress: Path) -> bool:
    try:
        record = json.loads(progress.read_text())
    except (OSError, ValueError):
        return False
    return record.get("stage") == "index" and record.get("done", 0) < record.get("total", 0)
