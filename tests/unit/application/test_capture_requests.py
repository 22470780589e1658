"""Raw memory_write / memory_edit input parsed into frozen requests, or refused clearly."""

import pytest

from memory.application.capture.requests import EditOperation, EditRequest, WriteRequest
from memory.domain.errors import InvalidRequest
from memory.domain.notes import Status

HASH = "a" * 64


def test_a_write_request_carries_typed_values():
    request = WriteRequest.parse(title=" Retries ", body="line 1\r\nline 2\r\n",
                                 repository="API", tags=["a", "#a", "b"], status="needs-review",
                                 note_type="handoff")
    assert request.title == "Retries" and request.body == ("line 1", "line 2")
    assert request.scope.repository == "api" and request.tags == ("a", "b")
    assert request.status is Status.NEEDS_REVIEW and request.note_type == "handoff"


@pytest.mark.parametrize("raw, message", [
    ({"title": ""}, "title must not be empty"), ({"title": "a\nb"}, "single line"),
    ({"title": 5}, "must be a string"), ({"body": None}, "body must be a string"),
    ({"body": "x\x00y"}, "NUL"), ({"body": "\ud800"}, "lone surrogate"),
    ({"note_type": "essay"}, "type must be one of"), ({"path": "/abs.md"}, "relative"),
    ({"supersedes": 3}, "supersedes must be a string"),
])
def test_bad_write_input_is_refused(raw, message):
    values = {"title": "T", "body": "b", "repository": "api", **raw}
    with pytest.raises(InvalidRequest, match=message):
        WriteRequest.parse(**values)


@pytest.mark.parametrize("given", ["c3c359385e61", " C3C359385E61E6 ", HASH])
def test_an_edit_takes_the_full_hash_or_a_prefix_of_twelve_or_more(given):
    request = EditRequest.parse(identity="x", content_hash=given, operation="archive")
    assert request.content_hash == given.strip().lower()


def test_a_bad_hash_is_never_echoed_back():
    with pytest.raises(InvalidRequest) as refused:
        EditRequest.parse(identity="x", content_hash="hunter2-password", operation="archive")
    assert "hunter2" not in str(refused.value) and "12 or more" in str(refused.value)


def test_edit_requests_per_operation():
    append = EditRequest.parse(identity="x", content_hash=HASH.upper(), operation="append",
                               text="more\n", heading="## Fix")
    assert append.operation is EditOperation.APPEND and append.lines == ("more",)
    assert append.content_hash == HASH
    replace = EditRequest.parse(identity="x", content_hash=HASH, operation="replace_lines",
                                start_line=2, end_line="3")
    assert (replace.start_line, replace.end_line, replace.lines) == (2, 3, ())
    fields = EditRequest.parse(identity="x", content_hash=HASH, operation="set_fields",
                               fields={"status": "archived"})
    assert fields.fields.values == (("status", "archived"),)


@pytest.mark.parametrize("raw, message", [
    ({"operation": "delete"}, "operation must be one of"),
    ({"operation": "append"}, "append needs text"),
    ({"operation": "append", "text": ""}, "append needs text"),
    ({"operation": "replace_lines", "start_line": 1}, "needs end_line"),
    ({"operation": "archive", "text": "x"}, "archive does not take text"),
    ({"operation": "move"}, "needs new_path"),
    ({"operation": "move", "new_path": ".git/x.md"}, "hidden"),
    ({"operation": "supersede"}, "needs superseded_by"),
    ({"operation": "set_fields", "fields": {"memory_id": "y"}}, "identity"),
    ({"operation": "archive", "content_hash": "abc"}, "only 3 characters, too short"),
    ({"operation": "archive", "content_hash": "a" * 11}, "only 11 characters, too short"),
    ({"operation": "archive", "content_hash": "g" * 12}, "other than hex digits"),
    ({"operation": "archive", "content_hash": "a" * 63 + "-"}, "other than hex digits"),
    ({"operation": "archive", "content_hash": "a" * 65}, "longer than a hash"),
    ({"operation": "replace_lines", "start_line": 0, "end_line": 1}, "between 1"),
    ({"operation": "append", "text": "x", "heading": "a\nb"}, "single line"),
])
def test_bad_edit_input_is_refused(raw, message):
    values = {"identity": "x", "content_hash": HASH, **raw}
    with pytest.raises(InvalidRequest, match=message):
        EditRequest.parse(**values)
