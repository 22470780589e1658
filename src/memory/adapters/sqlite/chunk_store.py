"""SqliteChunkStore: bm25 search and note lookup over the generation a reader sees."""

from __future__ import annotations

from collections.abc import Sequence

from memory.adapters.sqlite.index import SqliteIndex
from memory.adapters.sqlite.queries import lexical, scope_where
from memory.adapters.sqlite.view import GenerationView
from memory.domain.candidates import Hit
from memory.domain.note_keys import exact_first, name_key
from memory.domain.notes import Chunk, Note
from memory.domain.scope import ScopeFilter
from memory.ports.lexical_index import LexicalIndex
from memory.ports.note_catalogue import NoteCatalogue


def hits(view: GenerationView, found: list[tuple[Chunk, float]]) -> list[Hit]:
    notes = view.notes_for(chunk.memory_id for chunk, _ in found)
    return [Hit(chunk, notes[chunk.memory_id], score) for chunk, score in found
            if chunk.memory_id in notes]


class SqliteChunkStore(LexicalIndex, NoteCatalogue):
    """Both roles over FTS5 and the note tables of whatever generation the shared
    SqliteIndex serves this thread."""

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

    def notes(self, scope: ScopeFilter | None = None) -> list[Note]:
        def read(view: GenerationView) -> list[Note]:
            where, params = scope_where(scope)
            if not where:
                return list(view.all_notes())
            ids = view.note_ids_where(where, params)
            found = view.notes_for(ids)
            return [found[i] for i in ids if i in found]
        return self._index.read(read, [])

    def note(self, memory_id: str) -> Note | None:
        return self._index.read(lambda view: view.note(memory_id), None)

    def find(self, name: str) -> list[Note]:
        key = name_key(name)
        if not key:
            return []

        def read(view: GenerationView) -> list[Note]:
            ids = [r[0] for r in view.conn.execute(
                "SELECT DISTINCT memory_id FROM note_names WHERE name = ?", (key,))]
            return exact_first(view.notes_for(ids).values(), name)
        return self._index.read(read, [])

    def chunks_of(self, memory_id: str) -> Sequence[Chunk]:
        return self._index.read(lambda view: view.chunks_of(memory_id), [])

    def lines(self, memory_id: str) -> Sequence[str]:
        return self._index.read(lambda view: view.lines_of(memory_id), ())
