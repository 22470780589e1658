"""SqliteVectorIndex: cosine KNN with sqlite-vec over the current index generation."""

from __future__ import annotations

from collections.abc import Sequence

from memory.adapters.sqlite.chunk_store import hits
from memory.adapters.sqlite.index import SqliteIndex
from memory.adapters.sqlite.queries import nearest
from memory.domain.scope import ScopeFilter
from memory.ports.chunk_store import Hit
from memory.ports.vector_index import VectorIndex


class SqliteVectorIndex(VectorIndex):
    """Nearest chunks among admitted notes; empty when the generation has no vectors."""

    def __init__(self, index: SqliteIndex):
        self._index = index

    def search(self, vector: Sequence[float], scope: ScopeFilter, limit: int) -> list[Hit]:
        with self._index.reading() as view:
            if view is None:
                return []
            return hits(view, nearest(view.conn, vector, scope, limit))
