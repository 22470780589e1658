"""ChunkStore: lexical search and note lookup over the generation a reader sees.

Every value returned is what was written: damage is a StoreError, never other text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from memory.domain.candidates import Hit
from memory.domain.notes import Chunk, Note
from memory.domain.scope import ScopeFilter

__all__ = ["ChunkStore", "Hit"]


@runtime_checkable
class ChunkStore(Protocol):
    def search(self, query: str, scope: ScopeFilter, limit: int) -> list[Hit]:
        """Best chunks for the query's words (bm25), only among notes the scope admits."""

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
