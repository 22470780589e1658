"""`ai-memory serve --http` as a real process, driven by the SDK's Streamable HTTP client."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import anyio
import httpx2
import pytest
from http_harness import cli, git_work_tree, http_server, make_root, mcp_session

TOOLS = {"memory_search", "memory_get", "memory_neighbors", "memory_path", "memory_explain",
         "memory_refresh", "memory_health", "memory_feedback", "memory_write", "memory_edit"}
READ_ONLY = {"memory_search", "memory_get", "memory_neighbors", "memory_path", "memory_explain",
             "memory_health"}


@pytest.fixture(scope="module")
def anyio_backend():
    return "asyncio"


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    return make_root(tmp_path_factory.mktemp("http"))


@pytest.fixture(scope="module")
def server(root, tmp_path_factory):
    with http_server(root, tmp_path_factory.mktemp("logs") / "serve.stderr", "--no-watch") as s:
        yield s


def paths(packet: dict) -> set[str]:
    return {item["path"] for item in packet["items"]}


@pytest.mark.anyio
async def test_every_tool_answers_over_streamable_http(server):
    async with mcp_session(server.url, headers=server.owner) as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert set(tools) == TOOLS
        assert {n for n, t in tools.items() if t.annotations.read_only_hint} == READ_ONLY
        calls = [
            ("memory_search", {"query": "deploy checklist canary", "repository": "alpha"}),
            ("memory_get", {"identity": "beta-deploy", "start_line": 1, "end_line": 4}),
            ("memory_neighbors", {"identity": "beta-deploy"}),
            ("memory_path", {"source": "beta-deploy", "target": "Decisions/Deploys.md"}),
            ("memory_explain", {"query": "rollback plan"}),
            ("memory_refresh", {"mode": "index"}),
            ("memory_health", {}),
            ("memory_feedback", {"query": "deploy", "memory_id": "beta-deploy",
                                 "relevance": "relevant"}),
        ]
        for name, arguments in calls:
            with anyio.fail_after(180):
                result = await session.call_tool(name, arguments)
            assert not result.is_error, (name, result.content)
            assert isinstance(result.structured_content, dict), name
        packet = (await session.call_tool("memory_search", {
            "query": "deploy checklist canary", "repository": "alpha"})).structured_content
        top = packet["items"][0]
        assert top["path"] == "Repos/alpha/Notes/Deploy.md"
        assert top["citation"] == f"{top['path']}:L{top['start_line']}-L{top['end_line']}"
        with anyio.fail_after(180):
            written = await session.call_tool("memory_write", {
                "title": "Canary bake time", "repository": "alpha",
                "body": "A canary bakes for forty minutes behind the wombat gate."})
        assert not written.is_error, written.content
        assert written.structured_content["path"].startswith("Repos/alpha/Notes/")
        found = (await session.call_tool("memory_search", {
            "query": "wombat gate canary bake", "repository": "alpha"})).structured_content
        assert found["items"][0]["path"] == written.structured_content["path"]
    assert "Traceback" not in server.log


@pytest.mark.anyio
async def test_refresh_reports_progress_and_a_cancelled_call_leaves_the_server_serving(server):
    seen: list[tuple[float, float | None]] = []

    async def on_progress(progress, total, message):
        seen.append((progress, total))

    async with mcp_session(server.url, headers=server.owner) as session:
        with anyio.fail_after(300):
            result = await session.call_tool("memory_refresh", {"mode": "full", "force": True},
                                             progress_callback=on_progress)
        assert not result.is_error, result.content
        assert seen and seen[-1][0] == seen[-1][1]  # the last report is the whole

        with anyio.move_on_after(0.2):  # the SDK sends notifications/cancelled on the way out
            await session.call_tool("memory_refresh", {"mode": "full", "force": True})
        with anyio.fail_after(300):
            after = await session.call_tool("memory_search", {"query": "rollback plan"})
        assert not after.is_error and "Decisions/Deploys.md" in paths(after.structured_content)
    assert "Traceback" not in server.log


@pytest.mark.anyio
@pytest.mark.filterwarnings("ignore:The roots capability is deprecated")
async def test_each_session_defaults_to_its_own_roots(server, tmp_path):
    """Two clients of one process: one's workspace never becomes the other's default scope."""
    alpha = git_work_tree(tmp_path / "checkout", "git@github.com:acme/Alpha.git")
    beta = tmp_path / "beta"
    beta.mkdir()
    async with mcp_session(server.url, headers=server.owner, roots=[alpha]) as one, \
            mcp_session(server.url, headers=server.owner, roots=[beta]) as two, \
            mcp_session(server.url, headers=server.owner) as three:
        for _ in range(2):  # interleaved, twice: nothing sticks from the other session
            a = (await one.call_tool("memory_search", {"query": "deploy checklist"}))
            b = (await two.call_tool("memory_search", {"query": "deploy checklist"}))
            c = (await three.call_tool("memory_search", {"query": "deploy checklist"}))
            a, b, c = a.structured_content, b.structured_content, c.structured_content
            assert a["scope"]["inferred"] == {
                "repository": f"mcp-roots:{alpha} (git-remote:origin)"}
            assert not any(p.startswith("Repos/beta/") for p in paths(a))
            assert b["scope"]["inferred"] == {"repository": f"mcp-roots:{beta} (folder-name)"}
            assert not any(p.startswith("Repos/alpha/") for p in paths(b))
            assert "inferred" not in c["scope"]  # no roots, and the server's cwd is no one's
            assert {"Repos/alpha/Notes/Deploy.md", "Repos/beta/Notes/Deploy.md"} <= paths(c)


@pytest.mark.anyio
async def test_the_servers_own_folder_scopes_no_session(root, tmp_path):
    """Started inside a checkout, the HTTP server still infers nothing for its clients."""
    checkout = git_work_tree(tmp_path / "alpha", "git@github.com:acme/alpha.git")
    with http_server(root, tmp_path / "serve.stderr", "--no-watch", cwd=checkout) as served:
        async with mcp_session(served.url, headers=served.owner) as session:
            packet = (await session.call_tool("memory_search", {"query": "deploy checklist"}))
            assert "inferred" not in packet.structured_content["scope"]


ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def sse_result(response: httpx2.Response) -> dict:
    data = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
    messages = [json.loads(d) for d in data if d] if data else [response.json()]
    return next(m for m in messages if "result" in m or "error" in m)


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
def test_every_handshake_revision_is_negotiated(server, version):
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
    answer = sse_result(httpx2.post(server.url, json=init, headers={**ACCEPT, **server.owner},
                                    timeout=60))
    assert answer["result"]["protocolVersion"] == version


def test_the_2026_revision_needs_no_session(server):
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "memory_search", "arguments": {"query": "rollback plan"},
                       "_meta": meta}}
    headers = {**ACCEPT, **server.owner, "MCP-Protocol-Version": "2026-07-28",
               "Mcp-Method": "tools/call", "Mcp-Name": "memory_search"}
    answer = sse_result(httpx2.post(server.url, json=call, headers=headers, timeout=120))
    assert "Decisions/Deploys.md" in paths(answer["result"]["structuredContent"])


def test_an_oversized_body_gets_413_from_the_owner_too(server):
    big = b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"' + b"x" * (3 << 20) + b'"}}'
    response = httpx2.post(server.url, content=big, headers={**ACCEPT, **server.owner}, timeout=60)
    assert response.status_code == 413


def test_status_names_the_root_not_its_path(server, root):
    request = urllib.request.Request(server.url.replace("/mcp", "/ai-memory/status"),
                                     headers=server.owner)
    with urllib.request.urlopen(request, timeout=10) as r:
        status = json.loads(r.read())
    assert status["server"] == "ai-memory" and status["pid"] == server.process.pid
    assert str(root) not in json.dumps(status)


@pytest.mark.parametrize("bind,extra,message", [
    ("0.0.0.0:0", [], "without authentication"),
    ("192.0.2.1:0", [], "without authentication"),
    ("0.0.0.0:0", ["--auth", "tokens"], "--public-url"),
    ("127.0.0.1:0", ["--auth", "oauth", "--issuer", "https://id.example.com"], "--audience"),
    ("127.0.0.1:99999", [], "port"),
    (None, ["--auth", "tokens"], "belong to --http"),
])
def test_an_unsafe_or_incomplete_configuration_refuses_to_start(root, bind, extra, message):
    done = cli("serve", "--root", str(root), *(["--http", bind] if bind else []), *extra,
               timeout=120)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr and "Traceback" not in done.stderr
    assert done.stdout == ""
