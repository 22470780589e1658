"""PostgresNoteCatalogue: notes, chunks and lines of the generation this thread reads."""

from __future__ import annotations

from collections.abc import Sequence

from memory.adapters.postgres.database import PostgresDatabase
from memory.adapters.postgres.rows import chunk_from, note_from, scope_where
from memory.domain.notes import Chunk, Note
from memory.domain.scope import ScopeFilter
from memory.ports.note_catalogue import NoteCatalogue

_NOTES = "aim_members m JOIN aim_notes n ON n.row = m.note_row"


class PostgresNoteCatalogue(NoteCatalogue):
    """The note text is in the database: a server needs no checkout of the notes."""

    def __init__(self, database: PostgresDatabase):
        self._db = database

    def notes(self, scope: ScopeFilter | None = None) -> list[Note]:
        where, params = scope_where(scope)
        return self._db.read(lambda conn, gen: [note_from(r[0]) for r in conn.execute(
            f"SELECT n.note FROM {_NOTES} WHERE m.gen = %s AND {where} ORDER BY m.path",
            [gen, *params])], [])

    def note(self, memory_id: str) -> Note | None:
        def read(conn, gen):
            row = conn.execute(f"SELECT n.note FROM {_NOTES} WHERE m.gen = %s AND "
                               f"m.memory_id = %s", (gen, memory_id)).fetchone()
            return note_from(row[0]) if row else None
        return self._db.read(read, None)

    def find(self, name: str) -> list[Note]:
        exact = (name or "").strip()
        if not exact:
            return []
        # A note spelled exactly so comes first (two notes whose paths differ only in case
        # are two notes on Linux).
        return self._db.read(lambda conn, gen: [note_from(r[0]) for r in conn.execute(
            f"SELECT n.note FROM {_NOTES} WHERE m.gen = %s AND %s = ANY(n.names) "
            f"ORDER BY (m.memory_id = %s OR m.path = %s OR m.path = %s) DESC, m.path",
            (gen, exact.lower(), exact, exact, exact + ".md"))], [])

    def chunks_of(self, memory_id: str) -> Sequence[Chunk]:
        return self._db.read(lambda conn, gen: [chunk_from(r[0]) for r in conn.execute(
            "SELECT c.chunk FROM aim_members m JOIN aim_chunks c ON c.note_row = m.note_row "
            "WHERE m.gen = %s AND m.memory_id = %s ORDER BY c.ordinal",
            (gen, memory_id))], [])

    def lines(self, memory_id: str) -> Sequence[str]:
        def read(conn, gen):
            row = conn.execute(f"SELECT n.lines FROM {_NOTES} WHERE m.gen = %s AND "
                               f"m.memory_id = %s", (gen, memory_id)).fetchone()
            return tuple(row[0]) if row else ()
        return self._db.read(read, ())
