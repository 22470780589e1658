"""Resources and prompts in process: the handshake and the static lists build nothing."""

import pytest
from builders import World, make_doc
from mcp import Client

from memory.application.browse.notes import NoteBrowser
from memory.entrypoints.mcp_server import build_server


@pytest.fixture
def anyio_backend():
    return "asyncio"


class CountingFactory:
    def __init__(self, world):
        self.world = world
        self.built = 0

    def service(self):
        self.built += 1
        return self.world.service

    def browser(self):
        self.built += 1
        return NoteBrowser(catalogue=self.world.chunks, source=self.world.source,
                           index=self.world.generations)


@pytest.mark.anyio
async def test_prompts_and_templates_answer_before_anything_is_built():
    world = World([make_doc("a.md", "# A")])
    assert world.refresh("index").ok
    factory = CountingFactory(world)
    async with Client(build_server(factory.service, browser=factory.browser)) as client:
        assert {p.name for p in (await client.list_prompts()).prompts} == {"recall", "save"}
        assert len((await client.list_resource_templates()).resource_templates) == 2
        await client.get_prompt("recall", {"task": "anything"})
        assert factory.built == 0
        listed = (await client.list_resources()).resources
        assert [r.name for r in listed] == ["a.md"] and factory.built == 1
