"""SqliteVectorIndex: cosine KNN over the vectors of the current index generation."""

from __future__ import annotations

from collections.abc import Sequence

from memory.adapters.sqlite.chunk_store import hits
from memory.adapters.sqlite.index import SqliteIndex
from memory.adapters.sqlite.queries import as_blob, chunks_by_rowid, nearest
from memory.domain.scope import ScopeFilter
from memory.ports.chunk_store import Hit
from memory.ports.vector_index import VectorIndex


class SqliteVectorIndex(VectorIndex):
    """Nearest chunks among admitted notes; empty when the generation has no vectors.

    The vectors live in sqlite-vec. With `in_memory` (the default) each generation's
    vectors are also read into one matrix in the background, and searches use it once it
    is there: the same cosine ranking, a matrix product instead of a table scan.
    `wait_for_matrix` makes the first search wait for it (benchmarks, tests).
    """

    def __init__(self, index: SqliteIndex, *, in_memory: bool = True,
                 wait_for_matrix: bool = False):
        self._index = index
        self._in_memory = in_memory
        self._wait = wait_for_matrix

    def search(self, vector: Sequence[float], scope: ScopeFilter, limit: int) -> list[Hit]:
        with self._index.reading() as view:
            if view is None:
                return []
            matrix = view.vectors.get(wait=self._wait) if self._in_memory else None
            if matrix is None:
                return hits(view, nearest(view.conn, vector, scope, limit))
            as_blob(vector, matrix.dimension)  # refuses a wrong length or NaN, as sqlite-vec
            mask = view.scope_mask(matrix, scope)
            return hits(view, chunks_by_rowid(view.conn, matrix.nearest(vector, mask, limit)))
