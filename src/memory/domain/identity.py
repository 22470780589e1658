"""Note identity: the id a path gives, the ids a note may declare, who keeps a contested id.

Every note gets an id, whatever the other notes say. When two notes want the same one, the
rule deciding who keeps it depends on the two notes only, never on which was read first, so
a full rebuild and notes added or edited one refresh at a time, in any order, give every
note the same id.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator

from memory.domain.notes import Note, without_extension
from memory.domain.secrets import REDACTED_MARKER, redact_text

MAX_ID_CHARS = 256
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")


def path_identity(path: str) -> str:
    """The id a note's path gives it: the relative path without `.md`, lower-cased; a path
    too long for an id keeps its start and a digest of the whole (ids are arguments)."""
    ident = without_extension(path).lower()
    if len(ident) <= MAX_ID_CHARS:
        return ident
    return f"{ident[:MAX_ID_CHARS - 17]}~{_digest(path, 16)}"


def _digest(path: str, size: int) -> str:
    return hashlib.sha256(path.encode("utf-8", "surrogatepass")).hexdigest()[:size]


def declared_identity(value: str | None) -> tuple[str | None, str | None]:
    """A `memory_id` written in front matter as (id, None), or (None, why it is refused).

    A secret-shaped id is refused: ids come back from every tool and name the note in
    the index, the graph and the logs.
    """
    text = (value or "").strip()
    if not text:
        return None, None
    if len(text) > MAX_ID_CHARS:
        return None, f"longer than {MAX_ID_CHARS} characters"
    if _UNPRINTABLE.search(text):
        return None, "holds control characters"
    if REDACTED_MARKER.search(text) or redact_text(text) != text:
        return None, "looks like a secret"
    return text, None


def spare_identity(path: str, attempt: int = 1) -> str:
    """An id only this path can want: its path id marked with a digest of the path."""
    suffix = "" if attempt <= 1 else f"-{attempt}"
    return f"{path_identity(path)}~{_digest(path, 8)}{suffix}"


def identity_claims(note: Note) -> Iterator[str]:
    """The ids a note takes, most wanted first: what it declares (as note.memory_id), the
    id its path gives, then spare ids nobody else can derive."""
    seen = {note.memory_id}
    yield note.memory_id
    for candidate in (path_identity(note.path), *(spare_identity(note.path, n)
                                                   for n in range(1, 100))):
        if candidate not in seen:
            seen.add(candidate)
            yield candidate


def keeps_over(note: Note, other: Note, memory_id: str) -> bool:
    """Whether note keeps memory_id when other wants it too (both as first read, before
    any clash): an id a path gives beats an id declared, then the path sorting first wins."""
    return _rank(note, memory_id) < _rank(other, memory_id)


def _rank(note: Note, memory_id: str) -> tuple[bool, str]:
    declared = memory_id == note.memory_id and memory_id != path_identity(note.path)
    return declared, note.path


def assign_identities(notes: Iterable[Note]) -> dict[str, str]:
    """The id of every note of a root (path -> memory_id), each note as first read.

    Notes take ids in turn, in any order: an id goes to the note that keeps it over its
    holder, and the note displaced moves on to its next claim. However the notes are
    ordered (here, or one refresh at a time), every note ends with the same id.
    """
    by_path = {note.path: note for note in notes}
    claims = {path: identity_claims(note) for path, note in by_path.items()}
    held: dict[str, Note] = {}
    waiting = list(by_path.values())
    while waiting:
        note = waiting.pop()
        for memory_id in claims[note.path]:
            other = held.get(memory_id)
            if other is None or keeps_over(note, other, memory_id):
                held[memory_id] = note
                if other is not None:
                    waiting.append(other)
                break
    return {note.path: memory_id for memory_id, note in held.items()}
