"""PostgresNoteCatalogue: notes, chunks and lines of the generation this thread reads."""

from __future__ import annotations

from collections.abc import Sequence

from memory.adapters.postgres.database import PostgresDatabase
from memory.adapters.postgres.rows import chunk_from, note_from, scope_where
from memory.adapters.postgres.seals import CHUNK_SOUND, NOTE_SOUND, checked
from memory.domain.note_keys import exact_first, name_key
from memory.domain.notes import Chunk, Note
from memory.domain.scope import ScopeFilter
from memory.ports.note_catalogue import NoteCatalogue

_NOTES = "aim_members m JOIN aim_notes n ON n.row = m.note_row"
_NOTE = f"n.note, {NOTE_SOUND} AND n.memory_id = m.memory_id AND n.path = m.path"


class PostgresNoteCatalogue(NoteCatalogue):
    """The note text is in the database: a server needs no checkout of the notes. Every row
    is checked against its seal before it becomes a value."""

    def __init__(self, database: PostgresDatabase):
        self._db = database

    def notes(self, scope: ScopeFilter | None = None) -> list[Note]:
        where, params = scope_where(scope)
        return self._db.read(lambda conn, gen: _notes(gen, conn.execute(
            f"SELECT {_NOTE} FROM {_NOTES} WHERE m.gen = %s AND {where} ORDER BY m.path",
            [gen, *params])), [])

    def note(self, memory_id: str) -> Note | None:
        def read(conn, gen):
            found = _notes(gen, conn.execute(f"SELECT {_NOTE} FROM {_NOTES} WHERE m.gen = %s "
                                             f"AND m.memory_id = %s", (gen, memory_id)))
            return found[0] if found else None
        return self._db.read(read, None)

    def find(self, name: str) -> list[Note]:
        key = name_key(name)
        if not key:
            return []
        return exact_first(self._db.read(lambda conn, gen: _notes(gen, conn.execute(
            f"SELECT {_NOTE} FROM {_NOTES} WHERE m.gen = %s AND %s = ANY(n.names)",
            (gen, key))), []), name)

    def chunks_of(self, memory_id: str) -> Sequence[Chunk]:
        def read(conn, gen):
            rows = conn.execute(
                f"SELECT c.chunk, {CHUNK_SOUND} FROM aim_members m JOIN aim_chunks c "
                f"ON c.note_row = m.note_row WHERE m.gen = %s AND m.memory_id = %s "
                f"ORDER BY c.ordinal", (gen, memory_id)).fetchall()
            for _, is_sound in rows:
                checked(is_sound, f"a chunk row of {memory_id}", gen)
            return [chunk_from(value) for value, _ in rows]
        return self._db.read(read, [])

    def lines(self, memory_id: str) -> Sequence[str]:
        def read(conn, gen):
            row = conn.execute(f"SELECT n.lines, {NOTE_SOUND} FROM {_NOTES} WHERE m.gen = %s "
                               f"AND m.memory_id = %s", (gen, memory_id)).fetchone()
            if row is None:
                return ()
            checked(row[1], f"the note row of {memory_id}", gen)
            return tuple(row[0])
        return self._db.read(read, ())


def _notes(generation: str, cursor) -> list[Note]:
    rows = cursor.fetchall()
    for _, is_sound in rows:
        checked(is_sound, "a note row", generation)
    return [note_from(value) for value, _ in rows]
