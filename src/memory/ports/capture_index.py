"""What writing notes needs from the index: known notes, near duplicates, one-note indexing."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from attrs import frozen

from memory.domain.capture_errors import DuplicateCandidate
from memory.domain.evidence import EvidenceItem
from memory.domain.notes import Note
from memory.domain.placement import ScopeKey


@runtime_checkable
class NoteCatalogue(Protocol):
    def find(self, identity: str) -> Note | None:
        """The note a memory_id, path, title or alias names (as memory_get resolves it)."""

    def titled(self, title: str) -> Sequence[Note]:
        """Every note whose title is this one, compared case-insensitively."""


@runtime_checkable
class SimilarNotes(Protocol):
    def similar(self, *, title: str, body: str, scope: ScopeKey) -> Sequence[DuplicateCandidate]:
        """Notes of exactly that scope that likely hold the same knowledge, best first; the
        reason says which signal found each. Empty when none does."""


@frozen(kw_only=True)
class IndexOutcome:
    indexed: bool
    warnings: tuple[str, ...] = ()


@runtime_checkable
class SingleNoteIndexer(Protocol):
    def index_paths(self, paths: Sequence[str]) -> IndexOutcome:
        """Bring the index up to date for these notes only (a path that no longer exists
        leaves the index), visible to the next search; cost grows with the notes, not the
        index. indexed is False, with warnings saying why, when they could not be indexed."""


@runtime_checkable
class NoteEvidence(Protocol):
    def items(self, path: str) -> Sequence[EvidenceItem]:
        """The indexed evidence items (chunks) of the note at path, in order, redacted."""
