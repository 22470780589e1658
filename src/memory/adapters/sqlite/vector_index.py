"""SqliteVectorIndex: cosine KNN over the generation a reader sees, scope applied first."""

from __future__ import annotations

from collections.abc import Sequence

from memory.adapters.sqlite.index import SqliteIndex
from memory.adapters.sqlite.queries import as_blob, nearest
from memory.adapters.sqlite.schema import vector_dimension
from memory.adapters.sqlite.view import GenerationView, hits
from memory.domain.scope import ScopeFilter
from memory.domain.candidates import Hit
from memory.ports.vector_index import VectorIndex


class SqliteVectorIndex(VectorIndex):
    """Nearest chunks among admitted notes; empty when the generation has no vectors.

    The vectors live in SQLite (searched with sqlite-vec's distance function). With
    `in_memory` (the default) they are also held in one matrix, loaded once in the
    background and patched by each generation's changes; searches use it once it is
    there: the same cosine ranking, a matrix product instead of a table scan.
    `wait_for_matrix` makes the first search wait for it (benchmarks, tests).
    """

    def __init__(self, index: SqliteIndex, *, in_memory: bool = True,
                 wait_for_matrix: bool = False):
        self._index = index
        self._in_memory = in_memory
        self._wait = wait_for_matrix

    def search(self, vector: Sequence[float], scope: ScopeFilter, limit: int) -> list[Hit]:
        def read(view: GenerationView) -> list[Hit]:
            matrix = view.matrix(wait=self._wait) if self._in_memory else None
            if matrix is None:
                return hits(view, nearest(view.conn, vector, scope, limit,
                                          vector_dimension(view.conn)))
            as_blob(vector, matrix.dimension)  # refuses a wrong length or NaN, as SQL does
            mask = view.scope_mask(matrix, scope)
            return hits(view, view.chunks_by_rowid(matrix.nearest(vector, mask, limit)))
        return self._index.read(read, [])
