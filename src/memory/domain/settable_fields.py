"""The front matter fields an edit may set, each with its type, checked before anything is written."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping, Sequence
from enum import Enum

from attrs import frozen

from memory.domain.errors import InvalidRequest
from memory.domain.front_matter_yaml import FieldValue
from memory.domain.notes import Status
from memory.domain.note_text import single_line
from memory.domain.placement import scope_key

NOTE_TYPES = ("memory", "memory-anchor", "ai-session", "handoff", "memory-index")
ROOT_SCOPES = ("work", "personal")
ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
MAX_TITLE_CHARS = 300
MAX_ITEM_CHARS = 200
MAX_IDENTITY_CHARS = 1000
MAX_ITEMS = 50


class FieldType(Enum):
    LINE = "a single line of text"
    STATUS = f"one of {', '.join(s.value for s in Status)}"
    NOTE_TYPE = f"one of {', '.join(NOTE_TYPES)}"
    ROOT_SCOPE = f"one of {', '.join(ROOT_SCOPES)}"
    DATE = "an ISO date like 2025-10-01"
    WORDS = f"a list of at most {MAX_ITEMS} single-line strings"
    TAGS = f"a list of at most {MAX_ITEMS} tags without commas"
    KEYS = "a list of repository or project keys"
    LINKS = "a list of existing notes (memory_id, path or title), written as wikilinks"
    IDS = "a list of existing notes (memory_id, path or title), written as memory_ids"

    @property
    def names_notes(self) -> bool:
        return self in (FieldType.LINKS, FieldType.IDS)


SETTABLE = {
    "title": FieldType.LINE, "status": FieldType.STATUS, "type": FieldType.NOTE_TYPE,
    "root_scope": FieldType.ROOT_SCOPE, "review_after": FieldType.DATE,
    "tags": FieldType.TAGS, "aliases": FieldType.WORDS, "related_repos": FieldType.KEYS,
    "related_projects": FieldType.KEYS, "related": FieldType.LINKS,
    "supersedes": FieldType.IDS, "superseded_by": FieldType.IDS,
}
FIXED = {
    "memory_id": "is the note's identity and never changes (a move keeps it)",
    "created": "records when the knowledge was first written",
    "updated": "is set by every edit",
    "primary_scope": "follows the note's folder: move the note instead",
    "provenance": "records who wrote the note",
}


def _choice(value: object, name: str, allowed: Sequence[str]) -> str:
    text = single_line(value, name, MAX_ITEM_CHARS).lower().replace("_", "-")
    if text not in allowed:
        raise InvalidRequest(f"{name} must be one of {', '.join(allowed)}, not {value!r}")
    return text


def _date(value: object, name: str) -> dt.date:
    text = single_line(value, name, 10)
    try:
        if ISO_DATE.fullmatch(text):
            return dt.date.fromisoformat(text)
    except ValueError:
        pass
    raise InvalidRequest(f"{name} must be an ISO date like 2025-10-01, not {value!r}")


def _items(value: object, name: str, one: Callable[[object], str]) -> tuple[str, ...]:
    if not isinstance(value, (list, tuple)):
        raise InvalidRequest(f"{name} must be a list, not {type(value).__name__}")
    if len(value) > MAX_ITEMS:
        raise InvalidRequest(f"{name} holds {len(value)} items, at most {MAX_ITEMS}")
    return tuple(dict.fromkeys(one(item) for item in value))


def _words(value: object, name: str) -> tuple[str, ...]:
    return _items(value, name, lambda item: single_line(item, name, MAX_ITEM_CHARS))


def _tag(item: object, name: str) -> str:
    # The parser reads `#x` as the tag x and splits a tag at commas: refuse what it would split.
    text = single_line(item, name, MAX_ITEM_CHARS).lstrip("#").strip()
    if not text or "," in text:
        raise InvalidRequest(f"{name}: {item!r} is not a tag (no commas, not only '#')")
    return text


def _tags(value: object, name: str) -> tuple[str, ...]:
    return _items(value, name, lambda item: _tag(item, name))


def _keys(value: object, name: str) -> tuple[str, ...]:
    return _items(value, name, lambda item: scope_key(item, name))


def _identities(value: object, name: str) -> tuple[str, ...]:
    return _items(value, name, lambda item: single_line(item, name, MAX_IDENTITY_CHARS))


READERS: dict[FieldType, Callable[[object, str], FieldValue]] = {
    FieldType.LINE: lambda value, name: single_line(value, name, MAX_TITLE_CHARS),
    FieldType.STATUS: lambda value, name: _choice(value, name, [s.value for s in Status]),
    FieldType.NOTE_TYPE: lambda value, name: _choice(value, name, NOTE_TYPES),
    FieldType.ROOT_SCOPE: lambda value, name: _choice(value, name, ROOT_SCOPES),
    FieldType.DATE: _date,
    FieldType.WORDS: _words,
    FieldType.TAGS: _tags,
    FieldType.KEYS: _keys,
    FieldType.LINKS: _identities,
    FieldType.IDS: _identities,
}


def typed_field(name: str, value: object) -> FieldValue:
    """One settable field's value, checked against its type (InvalidRequest if wrong)."""
    return READERS[SETTABLE[name]](value, name)


def _refuse_name(name: object) -> InvalidRequest:
    if name in FIXED:
        return InvalidRequest(f"{name} cannot be set: it {FIXED[name]}")
    known = ", ".join(SETTABLE)
    return InvalidRequest(f"unknown front matter field {name!r}; fields that can be set: {known}")


@frozen
class FieldChanges:
    """Fields to set (None: remove), typed, in schema order; note names still unresolved."""

    values: tuple[tuple[str, FieldValue | None], ...]

    @classmethod
    def parse(cls, raw: object) -> FieldChanges:
        if not isinstance(raw, Mapping) or not raw:
            raise InvalidRequest("fields must be a non-empty object of front matter fields")
        for name in raw:
            if name not in SETTABLE:
                raise _refuse_name(name)
        return cls(tuple((name, None if raw[name] is None else typed_field(name, raw[name]))
                         for name in SETTABLE if name in raw))

    def identities(self) -> tuple[str, ...]:
        """Every note these changes name, for the caller to check and resolve."""
        return tuple(dict.fromkeys(
            ident for name, value in self.values
            if isinstance(value, tuple) and SETTABLE[name].names_notes
            for ident in value))

    def resolved(self, memory_ids: Mapping[str, str]) -> FieldChanges:
        """Note names replaced by their memory_ids; `related` written as wikilinks."""
        def one(name: str, value: FieldValue | None) -> FieldValue | None:
            if not isinstance(value, tuple) or not value or not SETTABLE[name].names_notes:
                return value
            ids = tuple(dict.fromkeys(memory_ids[ident] for ident in value))
            return tuple(f"[[{i}]]" for i in ids) if SETTABLE[name] is FieldType.LINKS else ids
        return FieldChanges(tuple((name, one(name, value)) for name, value in self.values))
