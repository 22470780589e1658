"""One contract for every NoteWriter: the fake tests lean on must behave as the real one."""

import pytest

from memory.adapters.inmemory.note_writer import InMemoryNoteWriter
from memory.adapters.markdown.note_writer import MarkdownNoteWriter
from memory.domain.capture_errors import EditConflict, NoteAlreadyExists
from memory.domain.errors import InvalidRequest, NotFound
from memory.domain.note_text import ContentKey

KEY = ContentKey(b"the contract's own content key..")
file_hash = KEY.hash


@pytest.fixture(params=["in-memory", "markdown"])
def writer(request, tmp_path):
    if request.param == "in-memory":
        return InMemoryNoteWriter(key=KEY)
    return MarkdownNoteWriter(tmp_path, key=KEY)


def test_create_then_read_gives_the_bytes_and_their_hash(writer):
    created = writer.create("Decisions/a.md", b"# A\n")
    read = writer.read("Decisions/a.md")
    assert created == read and read.content_hash == file_hash(b"# A\n")


def test_create_refuses_a_taken_path_and_bad_names(writer):
    writer.create("Decisions/a.md", b"one")
    with pytest.raises(NoteAlreadyExists):
        writer.create("Decisions/a.md", b"two")
    for bad in ("../a.md", ".git/a.md", "Decisions/NUL.md", "Decisions/a?.md"):
        with pytest.raises(InvalidRequest):
            writer.create(bad, b"x")
    assert writer.read("Decisions/a.md").data == b"one"


def test_replace_needs_the_current_hash(writer):
    writer.create("Decisions/a.md", b"one")
    with pytest.raises(EditConflict) as caught:
        writer.replace("Decisions/a.md", b"two", expected_hash=file_hash(b"zero"))
    assert caught.value.current_hash == file_hash(b"one")
    assert writer.replace("Decisions/a.md", b"two",
                          expected_hash=file_hash(b"one")).content_hash == file_hash(b"two")
    with pytest.raises(NotFound):
        writer.replace("Decisions/b.md", b"x", expected_hash=file_hash(b""))


def test_move_refuses_a_taken_target_and_a_stale_hash_then_moves(writer):
    writer.create("Decisions/a.md", b"one")
    writer.create("Decisions/b.md", b"other")
    with pytest.raises(NoteAlreadyExists):
        writer.move("Decisions/a.md", "Decisions/b.md", b"one", expected_hash=file_hash(b"one"))
    with pytest.raises(EditConflict):
        writer.move("Decisions/a.md", "Areas/a.md", b"one", expected_hash=file_hash(b"x"))
    moved = writer.move("Decisions/a.md", "Areas/a.md", b"one!", expected_hash=file_hash(b"one"))
    assert moved.path == "Areas/a.md" and writer.read("Areas/a.md").data == b"one!"
    with pytest.raises(NotFound):
        writer.read("Decisions/a.md")
