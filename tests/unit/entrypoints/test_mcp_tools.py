"""The MCP tools in process over the in-memory service: schemas, annotations, errors, laziness;
unknown argument keys refused (a typo like `repo=` must not search unscoped); descriptions that
read as prose."""

import io
import threading

import pytest
from builders import World, make_doc
from mcp import Client

from memory.entrypoints.mcp_server import INSTRUCTIONS, StdoutGuard, build_server

TOOLS = {"memory_search", "memory_get", "memory_neighbors", "memory_path", "memory_explain",
         "memory_refresh", "memory_health", "memory_feedback"}
VALID_CALLS = {
    "memory_search": {"query": "retry"},
    "memory_get": {"identity": "retry"},
    "memory_neighbors": {"identity": "retry"},
    "memory_path": {"source": "retry", "target": "timeouts"},
    "memory_explain": {"query": "retry"},
    "memory_refresh": {"mode": "index"},
    "memory_health": {},
    "memory_feedback": {"query": "retry", "memory_id": "retry", "relevance": "relevant"},
}


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture
def world():
    w = World([
        make_doc("Repos/api/Notes/Retry.md", "# Retry policy\n\nThe API client retries the "
                 "payment webhook three times with backoff.\nSee [[timeouts]].", memory_id="retry"),
        make_doc("Repos/api/Notes/Timeouts.md", "# Timeouts\n\nThe gateway timeout is 30 seconds.",
                 memory_id="timeouts"),
    ])
    assert w.refresh("full").ok
    return w


class Spy:
    """A service factory and warm-up that record when they were first asked for."""

    def __init__(self, service):
        self._service = service
        self.built = 0
        self.warmed = threading.Event()

    def service(self):
        self.built += 1
        return self._service

    def warm(self):
        self.warmed.set()


async def call(client, name, **arguments):
    return await client.call_tool(name, arguments)


@pytest.mark.anyio
async def test_handshake_lists_eight_tools_without_building_the_service(world):
    spy = Spy(world.service)
    async with Client(build_server(spy.service, warm=spy.warm)) as client:
        assert client.instructions == INSTRUCTIONS
        assert not spy.warmed.is_set()
        listed = (await client.list_tools()).tools
        assert {t.name for t in listed} == TOOLS
        assert spy.built == 0
        assert spy.warmed.wait(5)  # warm-up starts in the background once the tools are listed


@pytest.mark.anyio
async def test_argument_schemas_carry_bounds_and_enums(world):
    async with Client(build_server(lambda: world.service)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    search = tools["memory_search"].input_schema["properties"]
    assert (search["limit"]["minimum"], search["limit"]["maximum"]) == (1, 50)
    assert search["query"]["maxLength"] == 2000
    assert "any" in search["status"]["enum"]
    assert tools["memory_search"].input_schema["required"] == ["query"]
    assert tools["memory_neighbors"].input_schema["properties"]["depth"]["maximum"] == 4
    assert tools["memory_refresh"].input_schema["properties"]["mode"]["enum"] == ["index", "full"]
    assert "ctx" not in tools["memory_refresh"].input_schema["properties"]
    assert set(tools["memory_feedback"].input_schema["properties"]["relevance"]["enum"]) == {
        "relevant", "irrelevant", "missing"}
    assert tools["memory_search"].output_schema["properties"]["items"]["type"] == "array"
    refresh = tools["memory_refresh"].annotations
    assert (refresh.read_only_hint, refresh.destructive_hint, refresh.idempotent_hint) == (
        False, False, True)
    assert all(t.annotations.open_world_hint is False for t in tools.values())


@pytest.mark.anyio
async def test_search_returns_the_packet_and_cited_text(world):
    async with Client(build_server(lambda: world.service)) as client:
        result = await call(client, "memory_search", query="payment webhook retries",
                            repository="api", limit=3)
    assert not result.is_error
    item = result.structured_content["items"][0]
    assert item["path"] == "Repos/api/Notes/Retry.md"
    assert f"{item['path']}:L{item['start_line']}-L{item['end_line']}" in result.content[0].text


@pytest.mark.anyio
@pytest.mark.parametrize("name,arguments,expected", [
    ("memory_get", {"identity": "../../etc/passwd"}, "invalid request"),
    ("memory_get", {"identity": "no-such-note"}, "not found"),
    ("memory_search", {"query": "retry", "limit": -1}, "limit"),
    ("memory_search", {"query": "q" * 1_000_000}, "at most 2000 characters"),
    ("memory_refresh", {"mode": "bogus"}, "mode"),
    ("memory_feedback", {"query": "q", "memory_id": "retry", "relevance": "meh"}, "relevance"),
])
async def test_bad_calls_are_one_line_tool_errors_and_the_server_stays_up(
        world, name, arguments, expected):
    async with Client(build_server(lambda: world.service)) as client:
        bad = await client.call_tool(name, arguments)
        good = await call(client, "memory_health")
    assert bad.is_error
    text = bad.content[0].text
    assert expected in text and "\n" not in text and "Traceback" not in text
    assert len(text) < 1000
    assert not good.is_error


@pytest.mark.anyio
async def test_an_unexpected_failure_is_an_internal_error_logged_on_stderr(world, caplog):
    def broken():
        raise RuntimeError("disk on fire")

    async with Client(build_server(broken)) as client:
        result = await call(client, "memory_health")
    assert result.is_error
    assert result.content[0].text == "internal error: RuntimeError: disk on fire"
    assert any(r.exc_info and "disk on fire" in str(r.exc_info[1]) for r in caplog.records)


@pytest.mark.anyio
async def test_every_tool_answers(world):
    calls = [("memory_get", {"identity": "retry", "start_line": 2, "end_line": 3}),
             ("memory_neighbors", {"identity": "retry", "depth": 2}),
             ("memory_path", {"source": "retry", "target": "timeouts"}),
             ("memory_explain", {"query": "gateway timeout", "identity": "timeouts"}),
             ("memory_refresh", {"mode": "index", "force": True}),
             ("memory_health", {}),
             ("memory_feedback", {"query": "retry", "memory_id": "retry", "relevance": "relevant"})]
    async with Client(build_server(lambda: world.service)) as client:
        for name, arguments in calls:
            result = await client.call_tool(name, arguments)
            assert not result.is_error, (name, result.content)
            assert result.structured_content and result.content[0].text
    assert world.feedback.count() == 1


def test_stdout_guard_sends_text_to_stderr_and_keeps_the_wire_for_the_transport():
    wire, sink = io.TextIOWrapper(io.BytesIO(), encoding="utf-8"), io.StringIO()
    guard = StdoutGuard(wire, sink)
    print("library chatter", file=guard)
    assert sink.getvalue() == "library chatter\n"
    assert guard.buffer is wire.buffer and wire.buffer.getvalue() == b""


@pytest.mark.anyio
async def test_refresh_reports_progress_when_the_client_asks(world):
    seen = []

    async def on_progress(progress, total, message):
        seen.append((progress, total, message))

    async with Client(build_server(lambda: world.service)) as client:
        result = await client.call_tool("memory_refresh", {"mode": "full", "force": True},
                                        progress_callback=on_progress)
    assert not result.is_error, result.content
    assert seen and seen[-1][0] == seen[-1][1]


@pytest.mark.anyio
@pytest.mark.parametrize("name", sorted(VALID_CALLS))
@pytest.mark.parametrize("typo", ["repo", "Repository", "limit_", "arguments"])
async def test_an_unknown_key_is_a_tool_error_listing_the_valid_keys(world, name, typo):
    async with Client(build_server(lambda: world.service)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        bad = await client.call_tool(name, {**VALID_CALLS[name], typo: "api"})
        good = await client.call_tool(name, VALID_CALLS[name])
    assert bad.is_error, bad.content
    message = bad.content[0].text
    valid = list(tools[name].input_schema["properties"])
    assert f"unknown argument {typo!r}" in message and name in message
    assert f"{name} takes {', '.join(valid)}" in message or (not valid and "no arguments" in message)
    assert "\n" not in message
    assert not good.is_error, good.content


@pytest.mark.anyio
async def test_every_input_schema_forbids_additional_properties(world):
    async with Client(build_server(lambda: world.service)) as client:
        tools = (await client.list_tools()).tools
    assert len(tools) == 8
    for tool in tools:
        assert tool.input_schema["additionalProperties"] is False, tool.name
        assert "ctx" not in tool.input_schema["properties"], tool.name


@pytest.mark.anyio
async def test_descriptions_are_flowing_text_and_feedback_has_its_own_query_text(world):
    async with Client(build_server(lambda: world.service)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    for tool in tools.values():
        assert "\n" not in tool.description and "  " not in tool.description, tool.name
        assert len(tool.description) > 200, tool.name
    search = tools["memory_search"].description
    for word in ("no_answer", "warning", "citation", "leads", "cut_lines"):
        assert word in search, word
    assert "next_start_line" in tools["memory_get"].description
    rated = tools["memory_feedback"].input_schema["properties"]["query"]["description"]
    assert rated != tools["memory_search"].input_schema["properties"]["query"]["description"]
    assert "memory_search" in rated
