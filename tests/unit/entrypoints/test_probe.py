"""The set-up probe compares the tools a server declares with the code's one list."""

import pytest
from builders import World, make_doc
from mcp import Client

from memory.entrypoints.mcp_server import build_server, tool_names
from memory.entrypoints.probe import tool_mismatch


@pytest.fixture
def anyio_backend():
    return "asyncio"


async def declared(capture) -> list[str]:
    world = World([make_doc("a.md", "# A")])
    async with Client(build_server(lambda: world.service, capture=capture)) as client:
        return [t.name for t in (await client.list_tools()).tools]


@pytest.mark.anyio
async def test_a_writable_server_declares_exactly_the_code_s_list():
    names = await declared(capture=lambda: None)
    assert tool_mismatch(names, tool_names()) == ""
    assert {"memory_write", "memory_edit"} <= set(names)


@pytest.mark.anyio
async def test_a_read_only_server_declares_the_read_tools():
    names = await declared(capture=None)
    assert tool_mismatch(names, tool_names(writes=False)) == ""
    assert "memory_write" in tool_mismatch(names, tool_names())


def test_a_missing_and_an_unknown_tool_are_both_named():
    expected = tool_names()
    found = tool_mismatch([*expected[1:], "memory_surprise"], expected)
    assert f"not declared: {expected[0]}" in found
    assert "declared but unknown: memory_surprise" in found
