"""Requests and results of writing and editing notes; requests parse raw tool or CLI input."""

from __future__ import annotations

from enum import Enum

from attrs import frozen

from memory.application.search.requests import MAX_NAME_CHARS, bounded_int, clean_text
from memory.domain.errors import InvalidRequest
from memory.domain.evidence import EvidenceItem
from memory.domain.file_names import writable_note_path
from memory.domain.new_note import body_lines
from memory.domain.note_edits import MAX_NOTE_BYTES
from memory.domain.settable_fields import MAX_TITLE_CHARS, FieldChanges, typed_field
from memory.domain.note_text import single_line, text_lines
from memory.domain.notes import Status
from memory.domain.placement import WriteScope
from memory.domain.write_receipts import hash_prefix

MAX_HEADING_CHARS = 300
MAX_LINE = 10**9


def _flag(value: object, field: str) -> bool:
    if not isinstance(value, bool):
        raise InvalidRequest(f"{field} must be true or false")
    return value


def _identity(value: object, field: str) -> str | None:
    return None if value is None else clean_text(value, field, MAX_NAME_CHARS)


def _list_field(name: str, value: object) -> tuple[str, ...]:
    typed = typed_field(name, value)
    assert isinstance(typed, tuple)  # the schema reads this field as a list of names
    return typed


def _text_field(name: str, value: object) -> str:
    typed = typed_field(name, value)
    assert isinstance(typed, str)  # the schema reads this field as one line
    return typed


@frozen(kw_only=True)
class WriteRequest:
    title: str
    body: tuple[str, ...]
    scope: WriteScope | None
    path: str | None = None
    tags: tuple[str, ...] = ()
    related: tuple[str, ...] = ()  # identities, checked to exist before writing
    status: Status = Status.ACTIVE
    note_type: str = "memory"
    supersedes: str | None = None
    allow_duplicate: bool = False

    @classmethod
    def parse(cls, *, title: object, body: object, repository: object = None,
              project: object = None, ticket: object = None, kind: object = None,
              tags: object = None, related: object = None, status: object = None,
              note_type: object = None, supersedes: object = None, path: object = None,
              allow_duplicate: object = False) -> WriteRequest:
        scope = WriteScope.parse(repository=repository, project=project, ticket=ticket,
                                 kind=kind)
        if scope is None and path is None:
            raise InvalidRequest("say where the note belongs: repository, project, ticket "
                                 "(with its repository) or kind, or an explicit path")
        return cls(
            title=single_line(title, "title", MAX_TITLE_CHARS),
            body=body_lines(text_lines(body, "body", MAX_NOTE_BYTES)), scope=scope,
            path=None if path is None else writable_note_path(path),
            tags=_list_field("tags", tags) if tags else (),
            related=_list_field("related", related) if related else (),
            status=Status(typed_field("status", status)) if status else Status.ACTIVE,
            note_type=_text_field("type", note_type) if note_type else "memory",
            supersedes=_identity(supersedes, "supersedes"),
            allow_duplicate=_flag(allow_duplicate, "allow_duplicate"))


class EditOperation(str, Enum):
    APPEND = "append"
    REPLACE_LINES = "replace_lines"
    SET_FIELDS = "set_fields"
    SUPERSEDE = "supersede"
    ARCHIVE = "archive"
    MOVE = "move"

    @classmethod
    def parse(cls, value: object) -> EditOperation:
        try:
            return cls(value)
        except ValueError:
            allowed = ", ".join(o.value for o in cls)
            raise InvalidRequest(f"operation must be one of {allowed}, not {value!r}") from None


# What each operation takes; anything else given is a mistake worth saying out loud.
ARGUMENTS = {
    EditOperation.APPEND: {"text", "heading"},
    EditOperation.REPLACE_LINES: {"start_line", "end_line", "text"},
    EditOperation.SET_FIELDS: {"fields"},
    EditOperation.SUPERSEDE: {"superseded_by"},
    EditOperation.ARCHIVE: set(),
    EditOperation.MOVE: {"new_path"},
}
REQUIRED = {"start_line", "end_line", "fields", "superseded_by", "new_path"}


def _arguments(operation: EditOperation, given: dict[str, object]) -> dict[str, object]:
    extra = sorted(k for k, v in given.items() if v is not None and k not in ARGUMENTS[operation])
    if extra:
        raise InvalidRequest(f"{operation.value} does not take {', '.join(extra)}")
    missing = sorted(k for k in ARGUMENTS[operation] & REQUIRED if given.get(k) is None)
    if operation is EditOperation.APPEND and not given.get("text"):
        missing.append("text")
    if missing:
        raise InvalidRequest(f"{operation.value} needs {', '.join(missing)}")
    return given


@frozen(kw_only=True)
class EditRequest:
    identity: str
    content_hash: str  # the full hash, or a prefix of at least 12 hex characters
    operation: EditOperation
    lines: tuple[str, ...] = ()
    heading: str | None = None
    start_line: int = 0
    end_line: int = 0
    fields: FieldChanges | None = None
    superseded_by: str | None = None
    new_path: str | None = None

    @classmethod
    def parse(cls, *, identity: object, content_hash: object, operation: object,
              text: object = None, heading: object = None, start_line: object = None,
              end_line: object = None, fields: object = None, superseded_by: object = None,
              new_path: object = None) -> EditRequest:
        op = EditOperation.parse(operation)
        given = _arguments(op, {"text": text, "heading": heading, "start_line": start_line,
                                "end_line": end_line, "fields": fields,
                                "superseded_by": superseded_by, "new_path": new_path})
        digest = hash_prefix(clean_text(content_hash, "content_hash", 200))
        return cls(
            identity=clean_text(identity, "identity", MAX_NAME_CHARS), content_hash=digest,
            operation=op,
            lines=() if text is None or text == "" else text_lines(text, "text", MAX_NOTE_BYTES),
            heading=None if heading is None else single_line(heading, "heading",
                                                             MAX_HEADING_CHARS),
            start_line=0 if start_line is None else bounded_int(start_line, "start_line", 1,
                                                                MAX_LINE),
            end_line=0 if end_line is None else bounded_int(end_line, "end_line", 1, MAX_LINE),
            fields=None if given["fields"] is None else FieldChanges.parse(fields),
            superseded_by=_identity(superseded_by, "superseded_by"),
            new_path=None if new_path is None else writable_note_path(new_path))


@frozen(kw_only=True)
class EditResult:
    path: str
    memory_id: str | None
    content_hash: str
    indexed: bool
    changed: bool = True  # False: the edit left the note's bytes as they were
    commit: str | None = None
    warnings: tuple[str, ...] = ()


@frozen(kw_only=True)
class WriteResult:
    path: str
    memory_id: str
    content_hash: str
    indexed: bool
    items: tuple[EvidenceItem, ...] = ()
    superseded: EditResult | None = None
    commit: str | None = None
    warnings: tuple[str, ...] = ()
