"""Edits of a note as pure functions of its text: each changes what it names, nothing else.

Line numbers are the file's own lines, front matter included, as memory_get numbers them.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from typing import Protocol

from attrs import frozen

from memory.domain.capture_errors import SecretInNote
# The one home of heading and fence rules; private there until the parser exposes them.
from memory.domain.markdown import marked, parse_heading, split_front_matter
from memory.domain.errors import InvalidRequest
from memory.domain.front_matter_lines import block_of, field_lines, set_field
from memory.domain.front_matter_yaml import render_field
from memory.domain.settable_fields import FieldChanges
from memory.domain.note_text import NoteText
from memory.domain.notes import Status
from memory.domain.secrets import SecretFinding, redact_lines

MAX_NOTE_BYTES = 256 * 1024


class NoteEdit(Protocol):
    def apply(self, note: NoteText, today: dt.date) -> NoteText:
        """The note's new text; InvalidRequest when the edit cannot apply to this text."""


def _touched(note: NoteText, today: dt.date) -> NoteText:
    """`updated` set to today where the note keeps front matter one field per line."""
    try:
        block = block_of(note.lines)
    except InvalidRequest:
        return note  # a hand-shaped block is left as the person wrote it
    return set_field(note, "updated", render_field("updated", today)) if block.present else note


def _heading_text(heading: str) -> tuple[int | None, str]:
    """`## Fix` names level 2 and text `Fix`; plain `Fix` names any level."""
    stripped = heading.lstrip("#")
    level = len(heading) - len(stripped) or None
    return level, stripped.strip()


def _section_end(note: NoteText, level: int | None, text: str) -> int | None:
    """Index just after the last non-blank line under the first matching heading."""
    found: int | None = None
    body_start = split_front_matter("\n".join(note.lines))[1]
    for number, line, code in marked(note.lines, body_start):
        heading = None if code else parse_heading(line)
        if heading is None:
            continue
        if found is not None:
            return _last_text(note, found, number - 1)
        if heading[1].casefold() == text.casefold() and level in (None, heading[0]):
            found = number
    return None if found is None else _last_text(note, found, len(note.lines))


def _last_text(note: NoteText, heading_line: int, last_line: int) -> int:
    end = last_line
    while end > heading_line and not note.lines[end - 1].strip():
        end -= 1
    return end


@frozen(kw_only=True)
class Append:
    """Text at the end of the note, or at the end of a heading's own text (made if missing)."""

    lines: tuple[str, ...]
    heading: str | None = None

    def apply(self, note: NoteText, today: dt.date) -> NoteText:
        at, new = len(note.lines), self.lines
        if self.heading is not None:
            level, text = _heading_text(self.heading)
            end = _section_end(note, level, text)
            if end is not None:
                at = end
            else:
                gap = ("",) if note.lines and note.lines[-1].strip() else ()
                new = (*gap, f"{'#' * (level or 2)} {text}", *new)
        return _touched(note.replaced(at, at, new), today)


@frozen(kw_only=True)
class ReplaceLines:
    """Lines start_line..end_line (1-based, inclusive) replaced by text (none: removed)."""

    start_line: int
    end_line: int
    lines: tuple[str, ...]

    def apply(self, note: NoteText, today: dt.date) -> NoteText:
        total = len(note.lines)
        if not 1 <= self.start_line <= self.end_line <= total:
            raise InvalidRequest(f"lines {self.start_line}-{self.end_line} are not within the "
                                 f"note's lines 1-{total} (start_line <= end_line)")
        edited = note.replaced(self.start_line - 1, self.end_line, self.lines)
        _keep_identity(note, edited)
        return _touched(edited, today)


def _keep_identity(before: NoteText, after: NoteText) -> None:
    try:
        same = field_lines(before, "memory_id") == field_lines(after, "memory_id")
    except InvalidRequest:
        same = False
    if not same and field_lines(before, "memory_id") is not None:
        raise InvalidRequest("this edit would change or hide the note's memory_id, its "
                             "identity; leave the memory_id line as it is")


@frozen(kw_only=True)
class SetFields:
    """Front matter fields set (or removed), each by its own lines; `updated` set too."""

    changes: FieldChanges

    def apply(self, note: NoteText, today: dt.date) -> NoteText:
        for name, value in self.changes.values:
            note = set_field(note, name, None if value is None else render_field(name, value))
        return _touched(note, today)


@frozen(kw_only=True)
class Supersede:
    """Status superseded, and the notes that replace it (memory_ids) in superseded_by."""

    superseded_by: tuple[str, ...]

    def apply(self, note: NoteText, today: dt.date) -> NoteText:
        changes = FieldChanges((("status", Status.SUPERSEDED.value),
                                ("superseded_by", self.superseded_by)))
        return SetFields(changes=changes).apply(note, today)


@frozen(kw_only=True)
class Archive:
    """Status archived: kept for history, out of default searches."""

    def apply(self, note: NoteText, today: dt.date) -> NoteText:
        changes = FieldChanges((("status", Status.ARCHIVED.value),))
        return SetFields(changes=changes).apply(note, today)


@frozen(kw_only=True)
class Move:
    """The text a moved note needs: its memory_id written if only the old path implied it."""

    new_path: str
    memory_id: str | None  # the identity the note was known by before the move

    def apply(self, note: NoteText, today: dt.date) -> NoteText:
        if self.memory_id is None or field_lines(note, "memory_id") is not None:
            return note
        return set_field(note, "memory_id", render_field("memory_id", self.memory_id),
                         first=True)


def added_secrets(before: NoteText | None, after: NoteText) -> tuple[SecretFinding, ...]:
    """Secret findings of `after` on lines `before` did not already hold with that finding."""
    def keyed(note: NoteText) -> list[tuple[str, str]]:
        return [(f.kind, note.lines[f.line - 1]) for f in redact_lines(note.lines)[1]]
    had = Counter(keyed(before)) if before is not None else Counter()
    added = []
    for finding in redact_lines(after.lines)[1]:
        key = (finding.kind, after.lines[finding.line - 1])
        if had[key]:
            had[key] -= 1
        else:
            added.append(finding)
    return tuple(added)


def checked(before: NoteText | None, after: NoteText) -> bytes:
    """The bytes to write, once the text adds no secret and stays within the size limit."""
    secrets = added_secrets(before, after)
    if secrets:
        raise SecretInNote(secrets)
    data = after.encode()
    grew = before is None or len(data) > len(before.encode())
    if grew and len(data) > MAX_NOTE_BYTES:
        raise InvalidRequest(f"the note would be {len(data)} bytes, over the "
                             f"{MAX_NOTE_BYTES // 1024} KB limit: split it into notes")
    return data
