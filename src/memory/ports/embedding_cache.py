"""EmbeddingCache: vectors kept by (model id, chunk content hash) across generations."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol, runtime_checkable


@runtime_checkable
class EmbeddingCache(Protocol):
    def get_many(self, model_id: str, hashes: Iterable[str]) -> dict[str, Sequence[float]]:
        """Cached vectors for those hashes that have one; a damaged entry is a miss."""

    def put_many(self, model_id: str, vectors: Mapping[str, Sequence[float]]) -> None:
        """Remember vectors by content hash."""
