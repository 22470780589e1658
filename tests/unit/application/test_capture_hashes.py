"""The hash an edit takes (full, or the prefix `get` prints), and conflicts that tell the
caller's own earlier edit from someone else's."""

import pytest

from capture_fakes import FakeIndex
from memory.adapters.inmemory import FixedClock
from memory.adapters.inmemory.note_writer import TEST_KEY, InMemoryNoteWriter
from memory.adapters.inmemory.write_receipts import InMemoryWriteReceipts
from memory.application.capture.service import CaptureService
from memory.application.capture.requests import EditRequest, WriteRequest
from memory.domain.capture_errors import EditConflict
from memory.domain.new_note import Author
from memory.ports.errors import StoreError

file_hash = TEST_KEY.hash
CLIENT, OTHER = Author.named("claude-code"), Author.named("opencode")
PATH = "Repos/api/Notes/retry.md"
OLD = b"---\nmemory_id: api-retry\ntitle: Retry keys\n---\n# Retry keys\n\nPer attempt.\n"


@pytest.fixture
def root():
    return InMemoryNoteWriter({PATH: OLD})


@pytest.fixture
def receipts():
    return InMemoryWriteReceipts()


@pytest.fixture
def service(root, receipts):
    index = FakeIndex(root)
    index.index_all()
    return CaptureService(writer=root, catalogue=index, similar=index, indexer=index,
                          evidence=index, clock=FixedClock("2026-01-15T12:00:00Z"),
                          receipts=receipts)


def append(service, content_hash, line, author=CLIENT):
    return service.edit(EditRequest.parse(identity="api-retry", content_hash=content_hash,
                                          operation="append", text=line), author)


def test_the_twelve_characters_get_prints_are_enough_to_edit(service, root):
    result = append(service, file_hash(OLD)[:12], "First.")
    assert root.files[PATH].endswith(b"Per attempt.\nFirst.\n")
    assert result.content_hash == file_hash(root.files[PATH])


def test_two_edits_in_a_row_each_on_the_hash_the_last_one_returned_both_land(service, root):
    first = append(service, file_hash(OLD), "First.")
    second = append(service, first.content_hash[:12], "Second.")
    assert root.files[PATH].endswith(b"Per attempt.\nFirst.\nSecond.\n")
    assert second.content_hash == file_hash(root.files[PATH])


def test_a_prefix_of_an_older_version_is_a_conflict_and_writes_nothing(service, root):
    append(service, file_hash(OLD), "First.")
    before = root.files[PATH]
    with pytest.raises(EditConflict):
        append(service, file_hash(OLD)[:12], "Lost?", author=OTHER)
    assert root.files[PATH] == before


def test_reusing_the_hash_from_before_ones_own_edit_says_it_was_ones_own(service, root):
    read = file_hash(OLD)
    first = append(service, read, "First.")
    with pytest.raises(EditConflict) as caught:
        append(service, read[:12], "Second.")
    message = str(caught.value)
    assert caught.value.own and "your own earlier edit" in message
    assert "someone else" not in message
    assert read[:12] in message and first.content_hash in message
    assert caught.value.current_hash == first.content_hash == file_hash(root.files[PATH])


def test_several_own_edits_since_the_hash_still_read_as_ones_own(service):
    read = file_hash(OLD)
    first = append(service, read, "First.")
    append(service, first.content_hash, "Second.")
    with pytest.raises(EditConflict) as caught:
        append(service, read, "Third.")
    assert caught.value.own


def test_a_write_then_an_edit_then_the_writes_hash_again_reads_as_ones_own(service):
    written = service.write(WriteRequest.parse(title="Ocelot flag", repository="api",
                                               body="Staging needs it.\n"), CLIENT)
    request = dict(identity=written.path, operation="append", text="More.")
    service.edit(EditRequest.parse(content_hash=written.content_hash, **request), CLIENT)
    with pytest.raises(EditConflict) as caught:
        service.edit(EditRequest.parse(content_hash=written.content_hash, **request), CLIENT)
    assert caught.value.own


@pytest.mark.parametrize("between", ["another client", "a person in an editor"])
def test_a_change_by_anyone_else_since_reads_as_someone_elses(service, root, between):
    read = file_hash(OLD)
    first = append(service, read, "Mine.")
    if between == "another client":
        append(service, first.content_hash, "Theirs.", author=OTHER)
    else:
        root.files[PATH] += b"Typed by hand.\n"
    for stale in (read, first.content_hash):
        with pytest.raises(EditConflict) as caught:
            append(service, stale, "Again.")
        assert not caught.value.own and "someone else edited it" in str(caught.value)


def test_another_client_reusing_a_hash_is_told_someone_else_edited(service):
    read = file_hash(OLD)
    append(service, read, "Mine.")
    with pytest.raises(EditConflict) as caught:
        append(service, read, "Theirs.", author=OTHER)
    assert not caught.value.own and "someone else edited it" in str(caught.value)


class _Broken(InMemoryWriteReceipts):
    def record(self, receipt):
        raise StoreError("state folder is read-only")

    def made(self, content_hash):
        raise StoreError("state folder is read-only")


def test_receipts_that_cannot_be_kept_leave_the_edit_done_and_say_so(root):
    index = FakeIndex(root)
    index.index_all()
    service = CaptureService(writer=root, catalogue=index, similar=index, indexer=index,
                             evidence=index, clock=FixedClock("2026-01-15T12:00:00Z"),
                             receipts=_Broken())
    result = append(service, file_hash(OLD), "First.")
    assert root.files[PATH].endswith(b"First.\n")
    assert any("receipt was not kept" in w and "read-only" in w for w in result.warnings)
    with pytest.raises(EditConflict) as caught:
        append(service, file_hash(OLD), "Second.")
    assert not caught.value.own


def test_the_note_a_write_supersedes_keeps_a_receipt_too(service):
    read = file_hash(OLD)
    service.write(WriteRequest.parse(title="Retry keys v2", repository="api",
                                     supersedes="api-retry", body="Per charge now.\n"), CLIENT)
    with pytest.raises(EditConflict) as caught:
        append(service, read, "Late.")
    assert caught.value.own
