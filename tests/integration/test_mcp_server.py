"""`ai-memory serve` as a real subprocess, driven over stdio by the MCP SDK's client."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from textwrap import dedent

import anyio
import jsonschema
import pytest
from anyio.streams.text import TextReceiveStream
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

TOOLS = {"memory_search", "memory_get", "memory_neighbors", "memory_path", "memory_explain",
         "memory_refresh", "memory_health", "memory_feedback", "memory_write", "memory_edit"}
READ_ONLY = {"memory_search", "memory_get", "memory_neighbors", "memory_path", "memory_explain",
             "memory_health"}
OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}

NOTES = {
    "Repos/payments-api/_repo.md": """\
        ---
        memory_id: payments-api
        title: payments-api
        ---
        # payments-api

        The service that charges cards and receives the payment provider's webhooks.
        """,
    "Repos/payments-api/Notes/Webhook Retries.md": """\
        ---
        memory_id: pay-webhook-retries
        title: Webhook retries
        related: ["[[Gateway Timeouts]]"]
        ---
        # Webhook retries

        ## Policy

        The payment webhook is retried three times with exponential backoff.
        Each retry waits twice as long as the previous one, starting at 2 seconds.

        ## Why

        The provider drops deliveries that are not acknowledged within 30 seconds,
        see [[Gateway Timeouts]].
        """,
    "Repos/payments-api/Notes/Gateway Timeouts.md": """\
        ---
        memory_id: pay-gateway-timeouts
        title: Gateway Timeouts
        ---
        # Gateway timeouts

        The API gateway cuts requests after 30 seconds; long charges must run in a worker.
        """,
    "Repos/payments-api/Tickets/PAY-142/_ticket.md": """\
        ---
        memory_id: pay-142
        title: PAY-142 duplicate charges
        ---
        # PAY-142 duplicate charges

        Duplicate charges came from retried webhooks without an idempotency key.
        The fix stores the provider event id and ignores repeats.
        """,
    "Decisions/Logging.md": """\
        # Logging

        All services log JSON lines to stdout, one event per line.
        """,
}


def write_root(root: Path) -> None:
    for rel, text in NOTES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dedent(text), encoding="utf-8")


def refresh(root: Path, mode: str) -> None:
    """Publish a generation from another process, as a second agent or the CLI would."""
    done = subprocess.run(
        [sys.executable, "-m", "memory", "refresh", "--mode", mode, "--root", str(root)],
        capture_output=True, text=True, timeout=600, env={**os.environ, **OFFLINE})
    assert done.returncode == 0, done.stderr[-3000:]


def serve_command(root: Path) -> list[str]:
    return [sys.executable, "-m", "memory", "serve", "--root", str(root)]


@pytest.fixture(scope="module")
def anyio_backend():
    return "asyncio"


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("mcp") / "memory"
    base.mkdir()
    write_root(base)
    refresh(base, "full")
    return base


class Served:
    """The shared server session, its root, listed tools and stderr log."""

    def __init__(self, session: ClientSession, root: Path, tools: list, errlog: Path):
        self.session = session
        self.root = root
        self.tools = {t.name: t for t in tools}
        self.errlog = errlog

    async def call(self, name: str, **arguments):
        with anyio.fail_after(120):
            return await self.session.call_tool(name, arguments)


@pytest.fixture(scope="module")
async def served(root, tmp_path_factory):
    """One server for the module (benchmarks/mcp_stdio.py times its start-up)."""
    errlog = tmp_path_factory.mktemp("logs") / "serve.stderr"
    command, *args = serve_command(root)
    params = StdioServerParameters(command=command, args=args, env={**os.environ, **OFFLINE})
    with errlog.open("w") as err:
        async with stdio_client(params, errlog=err) as (read, write):
            async with ClientSession(read, write) as session:
                with anyio.fail_after(60):
                    await session.initialize()
                    tools = (await session.list_tools()).tools
                yield Served(session, root, tools, errlog)


def test_importing_the_server_loads_no_heavy_library():
    """initialize and tools/list must not wait for the model stack: it loads on first use."""
    heavy = ["torch", "numpy", "sentence_transformers", "transformers", "graphify", "networkx",
             "apsw", "dependency_injector", "memory.entrypoints.container", "memory.adapters"]
    probe = ("import sys, memory.entrypoints.cli, memory.entrypoints.mcp_server; "
             f"print([m for m in {heavy!r} if m in sys.modules])")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=120, check=True)
    assert done.stdout.strip() == "[]"


@pytest.mark.anyio
async def test_lists_exactly_the_ten_tools_with_annotations_and_bounds(served):
    assert set(served.tools) == TOOLS
    for name, tool in served.tools.items():
        hints = tool.annotations
        assert hints.open_world_hint is False, name
        assert hints.read_only_hint is (name in READ_ONLY), name
        assert tool.description and tool.input_schema["type"] == "object"
        assert tool.output_schema["type"] == "object" and tool.output_schema["properties"], name
    refresh_hints = served.tools["memory_refresh"].annotations
    assert (refresh_hints.destructive_hint, refresh_hints.idempotent_hint) == (False, True)
    assert served.tools["memory_feedback"].annotations.idempotent_hint is False

    search = served.tools["memory_search"].input_schema["properties"]
    assert (search["limit"]["minimum"], search["limit"]["maximum"], search["limit"]["default"]) \
        == (1, 50, 8)
    assert search["query"]["maxLength"] == 2000
    assert search["status"]["enum"] == ["active", "needs-review", "superseded", "archived", "any"]
    assert search["status"]["default"] == "active"
    assert served.tools["memory_search"].input_schema["required"] == ["query"]
    depth = served.tools["memory_neighbors"].input_schema["properties"]["depth"]
    assert (depth["minimum"], depth["maximum"]) == (1, 4)
    assert served.tools["memory_refresh"].input_schema["properties"]["mode"]["enum"] \
        == ["index", "full"]
    relevance = served.tools["memory_feedback"].input_schema["properties"]["relevance"]
    assert relevance["enum"] == ["relevant", "irrelevant", "missing"]
    explain = served.tools["memory_explain"].input_schema["properties"]
    assert {"identity", "repository", "project", "ticket", "path_prefix", "status"} <= set(explain)


@pytest.mark.anyio
async def test_search_returns_cited_evidence(served):
    result = await served.call("memory_search", query="webhook exponential backoff",
                               repository="payments-api", limit=3)
    assert not result.is_error, result.content
    packet = result.structured_content
    assert packet["generation"]["index"] and not packet["no_answer"]
    paths = [item["path"] for item in packet["items"]]
    top = packet["items"][paths.index("Repos/payments-api/Notes/Webhook Retries.md")]
    assert 1 <= top["start_line"] <= top["end_line"]
    text = result.content[0].text
    assert f"{top['path']}:L{top['start_line']}-L{top['end_line']}" in text
    lines = (served.root / top["path"]).read_text(encoding="utf-8").splitlines()
    cited = "\n".join(lines[top["start_line"] - 1:top["end_line"]])
    assert "exponential backoff" in cited


@pytest.mark.anyio
async def test_every_tool_answers(served):
    calls = [
        ("memory_search", {"query": "webhook exponential backoff"}),
        ("memory_search", {"query": "quantum chromodynamics lattice"}),
        ("memory_get", {"identity": "pay-webhook-retries", "start_line": 1, "end_line": 8}),
        ("memory_neighbors", {"identity": "pay-webhook-retries", "depth": 2}),
        ("memory_path", {"source": "pay-webhook-retries", "target": "pay-gateway-timeouts"}),
        ("memory_explain", {"query": "duplicate charges", "identity": "pay-142"}),
        ("memory_refresh", {"mode": "index"}),
        ("memory_health", {}),
        ("memory_feedback", {"query": "webhook retries", "memory_id": "pay-webhook-retries",
                             "relevance": "relevant", "note": "exactly what I needed"}),
    ]
    for name, arguments in calls:
        result = await served.call(name, **arguments)
        assert not result.is_error, (name, result.content)
        schema = served.tools[name].output_schema
        jsonschema.Draft202012Validator(schema).validate(result.structured_content)
        assert result.content[0].text.strip(), name
    path = (await served.call("memory_path", source="pay-webhook-retries",
                              target="pay-gateway-timeouts")).structured_content
    assert path["connected"] is True


@pytest.mark.anyio
@pytest.mark.parametrize("name,arguments,expected", [
    ("memory_get", {"identity": "../../etc/passwd"}, "invalid request"),
    ("memory_search", {"query": "webhook", "limit": -1}, "limit"),
    ("memory_refresh", {"mode": "bogus"}, "mode"),
    ("memory_search", {"query": "w" * 1_000_000}, "query"),
    ("memory_get", {"identity": "Repos/nowhere/No Such Note.md"}, "not found"),
    ("memory_neighbors", {"identity": "no-such-memory-id"}, "not found"),
    ("memory_neighbors", {"identity": "pay-142", "depth": 9}, "depth"),
])
async def test_a_bad_call_is_a_tool_error_and_the_next_call_succeeds(
        served, name, arguments, expected):
    bad = await served.call(name, **arguments)
    assert bad.is_error
    message = bad.content[0].text
    assert expected in message and "Traceback" not in message and "\n" not in message
    good = await served.call("memory_search", query="gateway timeout", limit=2)
    assert not good.is_error and good.structured_content["items"]
    assert "Traceback" not in served.errlog.read_text()  # expected errors are not crashes


@pytest.mark.anyio
async def test_a_scope_no_note_has_is_a_warning_with_the_closest_names(served):
    typo = (await served.call("memory_search", query="webhook retries",
                              repository="payment-api")).structured_content
    assert any(w.startswith("scope matches no note: no note has repository 'payment-api' "
                            "(closest: payments-api)") for w in typo["warnings"]), typo
    ticket = (await served.call("memory_search", query="duplicate charges",
                                ticket="PAY-143")).structured_content
    assert any("ticket 'PAY-143'" in w and "closest: PAY-142" in w
               for w in ticket["warnings"]), ticket
    known = (await served.call("memory_search", query="duplicate charges",
                               ticket="PAY-142")).structured_content
    assert known["items"] and not any("scope matches no note" in w for w in known["warnings"])


@pytest.mark.anyio
async def test_search_sees_a_generation_published_meanwhile_by_another_process(served, root):
    before = (await served.call("memory_search", query="timeout")).structured_content
    note = root / "Repos/payments-api/Notes/Gateway Timeouts.md"
    note.write_text(note.read_text() + "\nThe quokka bulkhead isolates zanzibar batches.\n")
    await anyio.to_thread.run_sync(refresh, root, "index")
    after = await served.call("memory_search", query="quokka bulkhead zanzibar")
    packet = after.structured_content
    assert packet["generation"]["index"] != before["generation"]["index"]
    assert packet["items"][0]["path"] == "Repos/payments-api/Notes/Gateway Timeouts.md"
    assert "quokka" in packet["items"][0]["text"]


@pytest.mark.anyio
async def test_stdout_carries_nothing_but_json_rpc(root, tmp_path):
    """A raw pipe, no SDK: every line the server writes must be a JSON-RPC message."""
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw-pipe", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "memory_search", "arguments": {"query": "payment webhook retries"}}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {
            "name": "memory_search", "arguments": {"query": "x", "limit": -1}}},
        {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {
            "name": "memory_health", "arguments": {}}},
    ]
    lines: list[str] = []
    with (tmp_path / "serve.stderr").open("w") as err, anyio.fail_after(180):
        process = await anyio.open_process(serve_command(root), stderr=err,
                                           env={**os.environ, **OFFLINE})
        async with process:
            stdout = TextReceiveStream(process.stdout)
            buffer = ""
            for request in requests:
                await process.stdin.send((json.dumps(request) + "\n").encode())
                if "id" not in request:
                    continue
                while not any(json.loads(x).get("id") == request["id"] for x in lines
                              if x.startswith("{")):
                    buffer += await stdout.receive()
                    *complete, buffer = buffer.split("\n")
                    lines += complete
            await process.stdin.aclose()
            async for chunk in stdout:
                buffer += chunk
            lines += [x for x in buffer.split("\n") if x]
            await process.wait()
    assert process.returncode == 0  # stdin closed: a clean exit
    assert len(lines) >= 5
    for line in lines:
        message = json.loads(line)
        assert message["jsonrpc"] == "2.0"
    by_id = {m["id"]: m for m in map(json.loads, lines) if "id" in m}
    assert by_id[3]["result"]["structuredContent"]["items"]
    assert by_id[4]["result"]["isError"] is True
    assert "result" in by_id[5]


@pytest.mark.anyio
async def test_a_root_never_indexed_says_not_indexed_over_mcp(tmp_path):
    """More notes than a search indexes by itself, and no watcher: nothing builds the index
    before the first read asks, so each read up to then must say that there is none."""
    root = tmp_path / "memory"
    root.mkdir()
    write_root(root)
    for i in range(101):
        (root / "Bulk").mkdir(exist_ok=True)
        (root / "Bulk" / f"b{i:03}.md").write_text(f"# Bulk {i}\n\nBulk note {i}.\n")
    params = StdioServerParameters(command=sys.executable, env={**os.environ, **OFFLINE},
                                   args=["-m", "memory", "serve", "--no-watch", "--root", str(root)])
    with (tmp_path / "serve.stderr").open("w") as err:
        async with stdio_client(params, errlog=err) as (read, write):
            async with ClientSession(read, write) as session:
                with anyio.fail_after(120):
                    await session.initialize()
                    health = (await session.call_tool("memory_health", {})).structured_content
                    got = (await session.call_tool(
                        "memory_get", {"identity": "Decisions/Logging.md"})).structured_content
                    search = (await session.call_tool(
                        "memory_search", {"query": "JSON lines stdout"})).structured_content
    assert any(p.startswith("not indexed: ") and "memory_refresh" in p
               for p in health["index"]["problems"]), health
    assert got["lines"] and any("not indexed" in w for w in got["warnings"]), got
    if search["freshness"] == "not-indexed":
        assert any("not indexed" in w for w in search["warnings"]), search
        assert "never mentions" not in (search["no_answer_reason"] or "")
    else:  # the background has built it meanwhile: then the answer is true
        assert search["items"][0]["path"] == "Decisions/Logging.md", search
