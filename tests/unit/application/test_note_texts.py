"""Reads of a note whose file is not in the root (a server with no checkout): the indexed lines
answer memory_get and resources; a file that is there still reads as it is now."""

import pytest
from builders import World, make_doc

from memory.application.browse.notes import NoteBrowser
from memory.domain.errors import NotFound

BODY = "# Deploy\n\nRoll back first.\nThen page the owner."


def indexed_then_gone():
    """The index holds the note; the root (this server's copy) does not."""
    world = World([make_doc("Decisions/deploy.md", BODY, memory_id="deploy")])
    assert world.refresh("index").ok
    world.source.delete("Decisions/deploy.md")
    return world


@pytest.mark.parametrize("identity", ["deploy", "Decisions/deploy.md"])
def test_memory_get_answers_from_the_index_when_the_root_lacks_the_file(identity):
    world = indexed_then_gone()
    expected = world.chunks.lines("deploy")
    read = world.service.get(identity, start_line=2)
    assert read.path == "Decisions/deploy.md" and read.line_count == len(expected)
    assert [line.text for line in read.lines] == list(expected[1:])
    assert read.content_hash == world.chunks.note("deploy").content_hash
    assert any("index holds" in w for w in read.warnings)


def test_a_resource_read_answers_from_the_index_when_the_root_lacks_the_file():
    world = indexed_then_gone()
    browser = NoteBrowser(catalogue=world.chunks, source=world.source, index=world.generations)
    text = browser.read_id("deploy")
    assert text.text == "\n".join(world.chunks.lines("deploy"))
    assert browser.read_path("Decisions/deploy.md").line_count == text.line_count


def test_a_file_edited_since_the_refresh_reads_as_it_is_now():
    world = World([make_doc("Decisions/deploy.md", BODY, memory_id="deploy")])
    assert world.refresh("index").ok
    world.source.put(make_doc("Decisions/deploy.md", BODY + "\nNew last line.", memory_id="deploy"))
    read = world.service.get("deploy")
    assert read.lines[-1].text == "New last line." and not read.warnings


def test_a_path_neither_the_root_nor_the_index_holds_is_not_found():
    world = indexed_then_gone()
    with pytest.raises(NotFound):
        world.service.get("Decisions/never.md")
