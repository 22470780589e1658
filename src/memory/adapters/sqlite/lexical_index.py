"""SqliteLexicalIndex: bm25 search over FTS5 in the generation a reader sees."""

from __future__ import annotations

from memory.adapters.sqlite.index import SqliteIndex
from memory.adapters.sqlite.queries import lexical
from memory.adapters.sqlite.view import GenerationView, hits
from memory.domain.candidates import Hit
from memory.domain.scope import ScopeFilter
from memory.ports.lexical_index import LexicalIndex


class SqliteLexicalIndex(LexicalIndex):
    """FTS5 over whatever generation the shared SqliteIndex serves this thread; the scope is
    judged by the vector matrix's mask when it is loaded, else in SQL."""

    def __init__(self, index: SqliteIndex):
        self._index = index

    def search(self, query: str, scope: ScopeFilter, limit: int) -> list[Hit]:
        def read(view: GenerationView) -> list[Hit]:
            matrix = view.matrix()
            judge = (lambda rowids: matrix.admitted_rowids(
                rowids, view.scope_mask(matrix, scope))) if matrix is not None else None
            return hits(view, lexical(view.conn, query, scope, limit, judge,
                                      view.chunks_by_rowid))
        return self._index.read(read, [])
