"""The keys a store filters and finds a note by, computed here once for every store.

Each store only renders these values into its own columns, so a scope or a name that
admits a note on one store admits it on all of them.
"""

from __future__ import annotations

from collections.abc import Iterable

from attrs import frozen

from memory.domain.notes import Note, Status


def name_key(name: str | None) -> str:
    """How a name is looked up: trimmed, case folded."""
    return (name or "").strip().lower()


def without_extension(path: str) -> str:
    """A note path without its Markdown extension, spelled in any case (`.md`, `.MD`)."""
    return path[:-3] if path.lower().endswith(".md") else path


def spelled_exactly(note: Note, name: str) -> bool:
    """The name is this note's id or path as written (with or without the extension)."""
    exact = (name or "").strip()
    return exact in (note.memory_id, note.path, without_extension(note.path))


def exact_first(notes: Iterable[Note], name: str) -> list[Note]:
    """Notes found by a name, those spelled exactly so first, then by path: two notes whose
    paths differ only in case are two notes on Linux, and the one asked for comes first."""
    return sorted(notes, key=lambda n: (not spelled_exactly(n, name), n.path))


@frozen(kw_only=True)
class NoteKeys:
    """What a scope filter compares and a name lookup matches (keys folded as the filter
    folds its own values: roots and paths lower-case, tickets upper-case)."""

    status: Status  # the effective status
    root: str
    ticket: str  # "" for a note of no ticket
    path: str
    repositories: tuple[str, ...]  # sorted
    projects: tuple[str, ...]  # sorted
    cross_cutting: bool  # owned by no repository, project or ticket: applies everywhere
    names: tuple[str, ...]  # sorted name keys

    @classmethod
    def of(cls, note: Note) -> NoteKeys:
        names = {name_key(n) for n in (*note.names, without_extension(note.path))}
        return cls(status=note.effective_status, root=(note.root_scope or "").lower(),
                   ticket=(note.ticket or "").upper(), path=note.path.lower(),
                   repositories=tuple(sorted(note.repositories)),
                   projects=tuple(sorted(note.projects)),
                   cross_cutting=note.is_cross_cutting, names=tuple(sorted(names - {""})))
