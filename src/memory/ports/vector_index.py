"""VectorIndex: nearest chunks to a query vector over the current index generation.

Explicitly numeric: vectors are sequences of float (adapters may pass arrays through).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from memory.domain.scope import ScopeFilter
from memory.domain.candidates import Hit


@runtime_checkable
class VectorIndex(Protocol):
    def search(self, vector: Sequence[float], scope: ScopeFilter, limit: int) -> list[Hit]:
        """Nearest chunks by cosine similarity (Hit.score), only among admitted notes."""
