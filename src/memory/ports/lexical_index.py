"""LexicalIndex: the chunks that share the query's words, best first, in the generation read.

Every value returned is what was written: damage is a StoreError, never other text.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from memory.domain.candidates import Hit
from memory.domain.scope import ScopeFilter

__all__ = ["Hit", "LexicalIndex"]


@runtime_checkable
class LexicalIndex(Protocol):
    def search(self, query: str, scope: ScopeFilter, limit: int) -> list[Hit]:
        """Best chunks for the query's words (bm25 or close to it), only among notes the
        scope admits."""
