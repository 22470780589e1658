"""Edits as pure functions of a note's bytes: what they name changes, every other byte stays."""

import datetime as dt

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from memory.domain.capture_errors import EditConflict, SecretInNote
from memory.domain.markdown import split_front_matter, split_lines
from memory.domain.errors import InvalidRequest
from memory.domain.note_edits import (MAX_NOTE_BYTES, Append, Archive, Move, ReplaceLines,
                                      SetFields, Supersede, checked)
from memory.domain.settable_fields import FieldChanges
from memory.domain.note_text import ContentKey, NoteText, check_hash

TODAY = dt.date(2026, 1, 15)
HAND_WRITTEN = (
    "\ufeff---\r\n"
    "# kept: a person's comment\r\n"
    "memory_id: api-retries\r\n"
    "title: 'Retries'   # why this title\r\n"
    "status: active\r\n"
    "tags:\r\n"
    "  - payments\r\n"
    "  - retries\r\n"
    "obsidian_color: red\r\n"
    "updated: 2025-01-01\r\n"
    "---\r\n"
    "# Retries\r\n"
    "\r\n"
    "## Fix\r\n"
    "Reuse the key.\r\n"
    "\r\n"
    "## Why\r\n"
    "Incident INC-1."
)

file_hash = ContentKey(b"a test's content key, 32 bytes..").hash


def note(text: str) -> NoteText:
    return NoteText.decode(text.encode("utf-8"), "n.md")


def text_of(edited: NoteText) -> str:
    return edited.encode().decode("utf-8")


def front(text: str) -> dict:
    return yaml.safe_load(split_front_matter(text.lstrip("\ufeff"))[0])


def changed_lines(before: str, after: str) -> set[str]:
    return set(after.split("\r\n")) ^ set(before.split("\r\n"))


def test_decoding_and_encoding_keeps_every_byte():
    for text in (HAND_WRITTEN, "", "no newline", "a\n\nb\n", "mixed\r\nends\nhere\r", "\n"):
        assert note(text).encode() == text.encode()
        assert list(note(text).lines) == split_lines(text.lstrip("\ufeff"))


def test_set_fields_changes_its_lines_only_keeping_bom_crlf_comments_and_unknown_keys():
    edited = text_of(SetFields(changes=FieldChanges.parse({"status": "needs-review"}))
                     .apply(note(HAND_WRITTEN), TODAY))
    assert edited.startswith("\ufeff---\r\n") and "\n" not in edited.replace("\r\n", "")
    assert changed_lines(HAND_WRITTEN, edited) == {
        "status: active", "status: needs-review", "updated: 2025-01-01", "updated: 2026-01-15"}
    assert front(edited)["obsidian_color"] == "red"
    assert front(edited)["tags"] == ["payments", "retries"]
    assert edited.endswith("Incident INC-1.")  # still no final line break


def test_set_fields_replaces_a_block_list_and_adds_new_fields_at_the_end_of_the_block():
    changes = FieldChanges.parse({"tags": ["payments", "idempotency"],
                                  "review_after": "2026-06-01", "aliases": ["retry keys"]})
    edited = text_of(SetFields(changes=changes).apply(note(HAND_WRITTEN), TODAY))
    data = front(edited)
    assert data["tags"] == ["payments", "idempotency"]
    assert data["review_after"] == dt.date(2026, 6, 1) and data["aliases"] == ["retry keys"]
    assert "  - retries\r\n" not in edited and "obsidian_color: red\r\n" in edited
    assert edited.index("aliases:") < edited.index("\r\n---\r\n# Retries")


def test_setting_a_field_to_null_removes_its_lines():
    edited = text_of(SetFields(changes=FieldChanges.parse({"tags": None}))
                     .apply(note(HAND_WRITTEN), TODAY))
    assert "tags" not in front(edited) and "  - payments" not in edited


def test_a_note_without_front_matter_gets_a_block_for_set_fields_but_not_for_append():
    bare = "# Title\n\nBody.\n"
    fielded = text_of(SetFields(changes=FieldChanges.parse({"status": "archived"}))
                      .apply(note(bare), TODAY))
    assert front(fielded) == {"status": "archived", "updated": TODAY}
    assert fielded.endswith("---\n" + bare)
    appended = text_of(Append(lines=("More.",)).apply(note(bare), TODAY))
    assert appended == bare + "More.\n"


def test_append_at_the_end_keeps_a_missing_final_line_break_missing():
    edited = text_of(Append(lines=("- one", "- two")).apply(note(HAND_WRITTEN), TODAY))
    assert edited.endswith("Incident INC-1.\r\n- one\r\n- two")
    assert front(edited)["updated"] == TODAY


def test_append_under_a_heading_goes_after_its_own_text():
    edited = text_of(Append(lines=("Also log the key.",), heading="Fix")
                     .apply(note(HAND_WRITTEN), TODAY))
    assert "## Fix\r\nReuse the key.\r\nAlso log the key.\r\n\r\n## Why" in edited


def test_append_under_a_missing_heading_makes_it_at_the_end():
    edited = text_of(Append(lines=("Use `RetryPolicy`.",), heading="### How")
                     .apply(note(HAND_WRITTEN), TODAY))
    assert edited.endswith("Incident INC-1.\r\n\r\n### How\r\nUse `RetryPolicy`.")


def test_headings_in_code_and_comments_in_front_matter_are_not_headings():
    text = "---\n# kept: a comment\ntitle: x\n---\n```\n# kept\n```\n## kept\ntext\n"
    edited = text_of(Append(lines=("added",), heading="kept").apply(note(text), TODAY))
    assert edited.endswith("## kept\ntext\nadded\n")


def test_replace_lines_uses_the_files_own_line_numbers_front_matter_included():
    edited = text_of(ReplaceLines(start_line=15, end_line=15, lines=("Reuse the same key.",))
                     .apply(note(HAND_WRITTEN), TODAY))
    assert changed_lines(HAND_WRITTEN, edited) == {
        "Reuse the key.", "Reuse the same key.", "updated: 2025-01-01", "updated: 2026-01-15"}
    removed = text_of(ReplaceLines(start_line=16, end_line=18, lines=())
                      .apply(note(HAND_WRITTEN), TODAY))
    assert removed.endswith("Reuse the key.")


@pytest.mark.parametrize("start, end", [(0, 1), (2, 1), (18, 19), (30, 30)])
def test_replace_lines_outside_the_note_is_refused(start, end):
    with pytest.raises(InvalidRequest, match="not within the note's lines 1-18"):
        ReplaceLines(start_line=start, end_line=end, lines=("x",)).apply(note(HAND_WRITTEN),
                                                                          TODAY)


def test_replace_lines_may_not_change_the_memory_id():
    with pytest.raises(InvalidRequest, match="memory_id"):
        ReplaceLines(start_line=3, end_line=3, lines=("memory_id: other",)) \
            .apply(note(HAND_WRITTEN), TODAY)
    with pytest.raises(InvalidRequest, match="memory_id"):
        ReplaceLines(start_line=1, end_line=1, lines=("",)).apply(note(HAND_WRITTEN), TODAY)


def test_supersede_and_archive_set_status_and_links():
    superseded = front(text_of(Supersede(superseded_by=("api-retries-v2",))
                               .apply(note(HAND_WRITTEN), TODAY)))
    assert superseded["status"] == "superseded"
    assert superseded["superseded_by"] == ["api-retries-v2"]
    assert front(text_of(Archive().apply(note(HAND_WRITTEN), TODAY)))["status"] == "archived"


def test_move_writes_the_known_memory_id_only_when_the_path_implied_it():
    assert Move(new_path="x.md", memory_id="api-retries").apply(
        note(HAND_WRITTEN), TODAY).encode() == HAND_WRITTEN.encode()
    bare = "---\ntitle: x\n---\nbody\n"
    moved = text_of(Move(new_path="b.md", memory_id="repos/api/a").apply(note(bare), TODAY))
    assert moved == "---\nmemory_id: repos/api/a\ntitle: x\n---\nbody\n"
    assert text_of(Move(new_path="b.md", memory_id="a").apply(note("body\n"), TODAY)) == \
        "---\nmemory_id: a\n---\nbody\n"


@pytest.mark.parametrize("raw, message", [
    ({"colour": "red"}, "unknown front matter field 'colour'"),
    ({"memory_id": "x"}, "identity"), ({"created": "2025-01-01"}, "cannot be set"),
    ({"updated": "2025-01-01"}, "cannot be set"), ({"primary_scope": {}}, "move"),
    ({"status": "done"}, "status must be one of"), ({"status": 1}, "must be a string"),
    ({"tags": "payments"}, "must be a list"), ({"tags": [1]}, "must be a string"),
    ({"tags": ["a\nb"]}, "single line"), ({"tags": ["x"] * 51}, "at most 50"),
    ({"tags": ["a, b"]}, "not a tag"), ({"tags": ["##"]}, "not a tag"),
    ({"review_after": "tomorrow"}, "ISO date"), ({"review_after": "2025-02-30"}, "ISO date"),
    ({"title": ""}, "empty"), ({"title": "a" * 301}, "too long"),
    ({"related_repos": ["a/b"]}, "short key"), ({"type": "essay"}, "type must be one of"),
    ({}, "non-empty"), ("status", "non-empty object"),
])
def test_unknown_fields_and_wrong_types_are_refused(raw, message):
    with pytest.raises(InvalidRequest, match=message):
        FieldChanges.parse(raw)


def test_hand_shaped_front_matter_is_refused_for_field_edits_but_append_still_works():
    flow = "---\n{title: x, status: active}\n---\nbody\n"
    with pytest.raises(InvalidRequest, match="not a `key: value` field"):
        SetFields(changes=FieldChanges.parse({"status": "archived"})).apply(note(flow), TODAY)
    assert text_of(Append(lines=("more",)).apply(note(flow), TODAY)) == flow + "more\n"
    twice = "---\nstatus: active\nstatus: archived\n---\n"
    with pytest.raises(InvalidRequest, match="repeats the field 'status'"):
        Archive().apply(note(twice), TODAY)


def test_related_names_are_resolved_to_wikilinks_and_ids_to_ids():
    changes = FieldChanges.parse({"related": ["Retry policy"], "supersedes": ["old one"]})
    assert changes.identities() == ("Retry policy", "old one")
    resolved = changes.resolved({"Retry policy": "retry-policy", "old one": "api-v1"})
    data = front(text_of(SetFields(changes=resolved).apply(note("body\n"), TODAY)))
    assert data["related"] == ["[[retry-policy]]"] and data["supersedes"] == ["api-v1"]


def test_a_secret_is_refused_with_line_and_kind_never_the_value():
    token = "ghp_" + "a1B2c3D4" * 5
    edited = Append(lines=("Use the token", f"token: {token}")).apply(note(HAND_WRITTEN), TODAY)
    with pytest.raises(SecretInNote) as caught:
        checked(note(HAND_WRITTEN), edited)
    assert token not in str(caught.value) and "line 20" in str(caught.value)
    assert {f.kind for f in caught.value.findings} >= {"github-token"}


def test_a_secret_a_person_already_wrote_does_not_block_other_edits():
    with_secret = HAND_WRITTEN + "\r\npassword: hunter2hunter2"
    before = note(with_secret)
    edited = Archive().apply(before, TODAY)
    assert checked(before, edited) == edited.encode()


def test_a_note_growing_past_the_limit_is_refused_but_a_big_one_can_shrink():
    big = note("x" * (MAX_NOTE_BYTES + 10) + "\n")
    with pytest.raises(InvalidRequest, match="256 KB"):
        checked(note("small\n"), Append(lines=("y" * MAX_NOTE_BYTES,)).apply(note("small\n"),
                                                                             TODAY))
    shrunk = ReplaceLines(start_line=1, end_line=1, lines=("x",)).apply(big, TODAY)
    assert checked(big, shrunk) == b"x\n"


def test_the_conflict_rule_carries_the_current_hash():
    check_hash("n.md", file_hash(b"a"), file_hash(b"a"))
    with pytest.raises(EditConflict) as caught:
        check_hash("n.md", file_hash(b"a"), file_hash(b"b"))
    assert caught.value.current_hash == file_hash(b"b")
    assert file_hash(b"b") in str(caught.value)


LINE = st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\r\n\x00"),
               max_size=30)


@given(st.lists(LINE, max_size=12), st.sampled_from(["\n", "\r\n"]), st.booleans(),
       st.lists(LINE, min_size=1, max_size=3))
def test_append_never_changes_the_lines_already_there(lines, newline, final, added):
    text = newline.join(lines) + (newline if final and lines else "")
    before = note(text)
    after = Append(lines=tuple(added)).apply(before, TODAY)
    if split_front_matter(text)[0] is None:
        assert after.lines[:len(before.lines)] == before.lines
        assert after.lines[len(before.lines):] == tuple(added)
        assert after.encode().startswith(text.rstrip("\r\n").encode())
