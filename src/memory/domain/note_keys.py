"""The keys a store filters and finds a note by, computed here once for every store.

Each store only renders these values into its own columns, so a scope or a name that
admits a note on one store admits it on all of them.
"""

from __future__ import annotations

from collections.abc import Iterable

from attrs import frozen

from memory.domain.notes import Note, Status, without_extension


def name_key(name: str | None) -> str:
    """How a name is looked up: trimmed, case folded."""
    return (name or "").strip().lower()


def spelled_exactly(note: Note, name: str) -> bool:
    """The name is this note's id or path as written (with or without the extension)."""
    exact = (name or "").strip()
    return exact in (note.memory_id, note.path, without_extension(note.path))


def exact_first(notes: Iterable[Note], name: str) -> list[Note]:
    """Notes found by a name, those spelled exactly so first, then by path: two notes whose
    paths differ only in case are two notes on Linux, and the one asked for comes first."""
    return sorted(notes, key=lambda n: (not spelled_exactly(n, name), n.path))


@frozen
class NoteKeys:
    """What a scope filter compares and a name lookup matches, folded as the filter folds
    its own values (roots and paths lower-case, tickets upper-case). Each key is computed
    when read: a scope judged over every note reads one or two of them."""

    note: Note

    @classmethod
    def of(cls, note: Note) -> NoteKeys:
        return cls(note)

    @property
    def status(self) -> Status:
        """The effective status."""
        return self.note.effective_status

    @property
    def root(self) -> str:
        return (self.note.root_scope or "").lower()

    @property
    def ticket(self) -> str:
        """The ticket id, "" for a note of no ticket."""
        return (self.note.ticket or "").upper()

    @property
    def path(self) -> str:
        return self.note.path.lower()

    @property
    def repositories(self) -> frozenset[str]:
        return self.note.repositories

    @property
    def projects(self) -> frozenset[str]:
        return self.note.projects

    @property
    def cross_cutting(self) -> bool:
        """Owned by no repository, project or ticket: the note applies everywhere."""
        return self.note.is_cross_cutting

    @property
    def names(self) -> tuple[str, ...]:
        """The name keys find() matches, sorted."""
        note = self.note
        names = {name_key(n) for n in (*note.names, without_extension(note.path))}
        return tuple(sorted(names - {""}))
