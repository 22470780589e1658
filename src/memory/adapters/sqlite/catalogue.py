"""SqliteNoteCatalogue: notes, chunks and lines of the generation a reader sees."""

from __future__ import annotations

from collections.abc import Sequence

from memory.adapters.sqlite.index import SqliteIndex
from memory.adapters.sqlite.queries import scope_where
from memory.adapters.sqlite.view import GenerationView
from memory.domain.note_keys import exact_first, name_key
from memory.domain.notes import Chunk, Note
from memory.domain.scope import ScopeFilter
from memory.ports.note_catalogue import NoteCatalogue


class SqliteNoteCatalogue(NoteCatalogue):
    """The note tables of whatever generation the shared SqliteIndex serves this thread;
    every row is checked against its CRC before it becomes a value."""

    def __init__(self, index: SqliteIndex):
        self._index = index

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
