"""Rows of the index and the domain values they hold, each row sealed by a CRC of its values.

A row read back is checked against its CRC before it becomes a Note, a Chunk or a manifest
entry: flipped bytes in a page (even with the file's size and mtime kept) surface as
IndexDamaged, never as wrong text or a decoding error in the middle of a search.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterable, Sequence

from memory.domain.note_keys import NoteKeys
from memory.domain.notes import Chunk, Note, ScopeKind, Status
from memory.domain.refresh import ManifestEntry
from memory.ports.errors import StoreError


class IndexDamaged(StoreError):
    """What the index file says fails its own checks: the file is damaged."""


_TUPLES = ("related", "related_repos", "related_projects", "supersedes", "superseded_by",
           "tags", "aliases", "links")
NOTE_FIELDS = ("memory_id", "path", "title", "type", "root_scope", "scope_kind", "scope_id",
               "repository", "project", "ticket", "status", "created", "updated",
               "review_after", *_TUPLES, "content_hash", "line_count")
# The column of each NoteKeys key (the domain computes them, so SQL agrees with admits()).
KEY_COLUMNS = {"status": "effective_status", "root": "root_key", "ticket": "ticket_key",
               "path": "path_key", "repositories": "repo_keys", "projects": "project_keys",
               "cross_cutting": "cross_cutting"}
SCOPE_KEYS = tuple(KEY_COLUMNS.values())
NOTE_COLUMNS = ", ".join(f"n.{name}" for name in (*NOTE_FIELDS, *SCOPE_KEYS, "crc"))
CHUNK_FIELDS = ("chunk_id", "memory_id", "path", "heading", "start_line", "end_line", "text",
                "context", "ordinal", "hash")
CHUNK_COLUMNS = ", ".join(f"c.{name}" for name in (*CHUNK_FIELDS, "crc"))
MANIFEST_COLUMNS = "path, content_hash, size, mtime_ns, crc"

INSERT_NOTE = (f"INSERT INTO notes ({', '.join((*NOTE_FIELDS, *SCOPE_KEYS))}, crc, lines, "
               f"lines_crc) VALUES ({', '.join('?' * (len(NOTE_FIELDS) + len(SCOPE_KEYS) + 3))})")
INSERT_CHUNK = (f"INSERT INTO chunks ({', '.join(CHUNK_FIELDS)}, crc) "
                f"VALUES ({', '.join('?' * (len(CHUNK_FIELDS) + 1))})")


def crc(values: Iterable) -> int:
    """CRC-32 of a row's values, typed and length-prefixed so no two rows share an encoding."""
    # One crc32 over the joined encoding: a running CRC fed piece by piece is the CRC of
    # the pieces' concatenation, and a note's 32 values cost 64 calls that way.
    parts = []
    for item in values:
        if item is None:
            data = b"N"
        elif isinstance(item, bytes):
            data = b"B" + item
        elif isinstance(item, str):
            data = b"S" + item.encode("utf-8", "surrogatepass")
        else:
            data = b"V" + repr(item).encode("ascii")
        parts += (len(data).to_bytes(8, "little"), data)
    return zlib.crc32(b"".join(parts))


def sealed(values: Sequence) -> tuple:
    """The values followed by their CRC, as a row is written."""
    return (*values, crc(values))


def opened(row: Sequence, what: str) -> tuple:
    """The values of a row read back, after its last column (the CRC) vouched for them."""
    *values, stored = row
    if crc(values) != stored:
        raise IndexDamaged(f"index file is damaged: a {what} row fails its check")
    return tuple(values)


def note_row(note: Note, lines: Sequence[str]) -> tuple:
    values = []
    for name in NOTE_FIELDS:
        value = getattr(note, name)
        if name in _TUPLES:
            value = json.dumps(list(value))
        elif isinstance(value, (ScopeKind, Status)):
            value = value.value
        values.append(value)
    keys = NoteKeys.of(note)
    keys_values = [_key_value(getattr(keys, key)) for key in KEY_COLUMNS]
    text = json.dumps(list(lines))
    return (*sealed((*values, *keys_values)), text, crc((text,)))


def _key_value(value: object) -> object:
    if isinstance(value, Status):
        return value.value
    if isinstance(value, frozenset):
        return json.dumps(sorted(value))
    return int(value) if isinstance(value, bool) else value


def note_from_row(row: Sequence) -> Note:
    values = opened(row, "note")
    try:
        fields = dict(zip(NOTE_FIELDS, values))
        for name in _TUPLES:
            text = fields[name]
            fields[name] = () if text == "[]" else tuple(json.loads(text))  # most are empty
        fields["scope_kind"] = ScopeKind(fields["scope_kind"]) if fields["scope_kind"] else None
        fields["status"] = Status(fields["status"])
        return Note(**fields)
    except (ValueError, TypeError) as exc:  # a CRC collision is all that gets here
        raise IndexDamaged(f"index file is damaged: a note row does not decode: {exc}") from exc


def lines_from_row(text: str, stored: int) -> tuple[str, ...]:
    if crc((text,)) != stored:
        raise IndexDamaged("index file is damaged: a note's lines fail their check")
    try:
        return tuple(json.loads(text))
    except ValueError as exc:
        raise IndexDamaged(f"index file is damaged: a note's lines do not decode: {exc}") from exc


def chunk_row(chunk: Chunk) -> tuple:
    return sealed(tuple(getattr(chunk, name) for name in CHUNK_FIELDS))


def chunk_from_row(row: Sequence) -> Chunk:
    values = opened(row, "chunk")
    try:
        return Chunk(**dict(zip(CHUNK_FIELDS, values)))
    except (ValueError, TypeError) as exc:
        raise IndexDamaged(f"index file is damaged: a chunk row does not decode: {exc}") from exc


def vector_row(rowid: int, blob: bytes) -> tuple[int, bytes, int]:
    return (rowid, blob, crc((rowid, blob)))


def vector_from_row(rowid: int, blob: bytes, stored: int) -> bytes:
    if crc((rowid, blob)) != stored:
        raise IndexDamaged(f"index file is damaged: the vector of chunk row {rowid} fails its check")
    return blob


def manifest_row(entry: ManifestEntry) -> tuple:
    return sealed((entry.path, entry.content_hash, entry.size, entry.mtime_ns))


def manifest_from_row(row: Sequence) -> ManifestEntry:
    path, digest, size, mtime = opened(row, "manifest")
    return ManifestEntry(path=path, content_hash=digest, size=size, mtime_ns=mtime)


def entry_json(entry: ManifestEntry | None) -> str | None:
    if entry is None:
        return None
    return json.dumps([entry.content_hash, entry.size, entry.mtime_ns])


def entry_from_json(path: str, text: str | None) -> ManifestEntry | None:
    if text is None:
        return None
    try:
        digest, size, mtime = json.loads(text)
    except (ValueError, TypeError) as exc:
        raise IndexDamaged(f"index file is damaged: a manifest log entry: {exc}") from exc
    return ManifestEntry(path=path, content_hash=digest, size=size, mtime_ns=mtime)
