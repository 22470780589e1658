"""NoteCatalogue: the indexed notes, their chunks and lines, as the generation read holds them.

Every value returned is what was written: damage is a StoreError, never other text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from memory.domain.notes import Chunk, Note
from memory.domain.scope import ScopeFilter


@runtime_checkable
class NoteCatalogue(Protocol):
    def notes(self, scope: ScopeFilter | None = None) -> list[Note]:
        """Every note of the generation (optionally only those the scope admits)."""

    def note(self, memory_id: str) -> Note | None:
        """One note by memory_id, or None."""

    def find(self, name: str) -> list[Note]:
        """Notes whose memory_id, path, title or alias equals name (case-insensitive)."""

    def chunks_of(self, memory_id: str) -> Sequence[Chunk]:
        """The chunks of one note, in order."""

    def lines(self, memory_id: str) -> Sequence[str]:
        """The indexed lines of one note (line 1 first), for context expansion."""
