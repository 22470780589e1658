"""What the stdio edge answers to lines the SDK cannot parse, and to unknown tools."""

import io
import json

import anyio
import mcp_types
import pytest
from builders import World, make_doc
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage

from memory.entrypoints.mcp_server import build_server
from memory.entrypoints.mcp_stdio import AnsweringReadStream, CheckedLines, error_reply


@pytest.fixture
def anyio_backend():
    return "asyncio"


def failure(line: str) -> Exception:
    """What the SDK's stdio reader puts on its stream for this line."""
    try:
        mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except Exception as exc:  # noqa: BLE001 - the reader passes any on
        return exc
    raise AssertionError(f"the SDK parses {line[:60]!r}")


CALL = '{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"memory_search",' \
       '"arguments":{"query":%s}}}'


@pytest.mark.parametrize("line,request_id,code,says", [
    ('{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"na', 7, -32700, "not JSON"),
    ('{"jsonrpc":"2.0","id":"a-7","method":"tools/ca', "a-7", -32700, "not JSON"),
    ('{"jsonrpc":"2.0","id":7,"met', None, -32700, "not JSON"),  # no method seen: maybe a reply
    ('{"jsonrpc":"2.0","method":"x","params":{"id":3,"q":"\\"{"},"id":9,', 9, -32700, "JSON"),
    (CALL % (8, '"deploy \\ud83d"'), 8, -32600, "lone UTF-16 surrogate escape (\\ud83d"),
    (CALL % (8, '"\\udc00 tail"'), 8, -32600, "lone UTF-16 surrogate"),
    (CALL % (9, "9" * 5000), 9, -32600, "number"),
    ('{"jsonrpc":"2.0","id":' + "9" * 5000 + ',"method":"ping"}', None, -32600, "number"),
    ('{"jsonrpc":"2.0","id":10,"method":"ping","params":' + "[" * 50000 + "]" * 50000 + "}",
     10, -32600, "recursion"),
    ("[1, 2]", None, -32600, "not a JSON-RPC 2.0 request"),
    ('{"id":11,"method":"ping"}', 11, -32600, "jsonrpc"),
    ('{"jsonrpc":"2.0","id":true,"method":"ping","params":[]}', None, -32600, "id"),
    ("", None, -32700, "not JSON"),
])
def test_each_unparsable_line_gets_an_error_with_the_id_it_carries(line, request_id, code, says):
    reply = error_reply(failure(line))
    assert (reply.id, reply.error.code) == (request_id, code)
    assert says in reply.error.message and len(reply.error.message) <= 300


@pytest.mark.parametrize("line", ['{"jsonrpc":"2.0","id":3,"result":{"roots":[}',
                                  '{"jsonrpc":"1.0","id":3,"result":{}}',
                                  '{"jsonrpc":"2.0","id":3,"error":"boom"}'])
def test_a_broken_reply_from_the_client_is_not_answered(line):
    # Its id numbers one of our requests: an error with that id would answer a client request.
    assert error_reply(failure(line)) is None


@pytest.mark.anyio
async def test_the_stream_answers_failures_and_passes_messages_on():
    inbound_send, inbound = anyio.create_memory_object_stream(10)
    outbound, replies = anyio.create_memory_object_stream(10)
    ping = SessionMessage(mcp_types.JSONRPCRequest(jsonrpc="2.0", id=5, method="ping"))
    for item in (failure('{"jsonrpc":"2.0","id":4,"method":'), ping):
        await inbound_send.send(item)
    inbound_send.close()
    async with AnsweringReadStream(inbound, outbound) as stream:
        passed = [item async for item in stream]
    assert passed == [ping]
    answered = replies.receive_nowait().message
    assert (answered.id, answered.error.code) == (4, -32700)


@pytest.mark.anyio
async def test_an_unknown_tool_is_a_protocol_error_and_the_server_stays_up():
    world = World([make_doc("Notes/A.md", "# A\n\napples.\n")])
    world.refresh("index")
    async with Client(build_server(lambda: world.service)) as client:
        with pytest.raises(MCPError) as raised:
            await client.call_tool("memory_teleport", {})
        health = await client.call_tool("memory_health", {})
    assert raised.value.error.code == -32602
    assert raised.value.error.message.startswith("unknown tool 'memory_teleport'; the tools are ")
    assert not health.is_error


@pytest.mark.anyio
async def test_checked_lines_pass_good_lines_on_and_answer_each_malformed_one():
    ping = b'{"jsonrpc":"2.0","id":%d,"method":"ping"}'
    lines = [ping % 1,
             b'{"jsonrpc":"2.0","id":2,"method":"ping","params":' + b"[" * 100_000
             + b"]" * 100_000 + b"}",
             b'{"jsonrpc":"2.0","id":3,"method":"ping","params":{"n":1e999999}}',
             b'{"jsonrpc":"2.0","id":4,"method":"ping","params":{"s":"\xff\xfe"}}',
             b'{"jsonrpc":"2.0","id":5,"method":"ping","params":{"a":1,"a":2}}',
             b'{"jsonrpc":"2.0","id":6,"method":"ping","params":{"s":"' + b"x" * 5000 + b'"}}',
             b'{"jsonrpc":"2.0","id":9,"result":{"cut":[}',  # a client's broken reply: dropped
             ping % 7]
    checked = CheckedLines(io.BytesIO(b"\n".join(lines) + b"\n"), limit=4000)
    outbound, replies = anyio.create_memory_object_stream(10)
    checked.answer_on(outbound)
    passed = [json.loads(line)["id"] async for line in checked]
    outbound.close()
    answered = [(r.message.id, r.message.error.code) async for r in replies]
    assert passed == [1, 7]
    assert answered == [(2, -32600), (3, -32600), (4, -32700), (5, -32600), (6, -32600)]
