"""PostgresVectorIndex: nearest chunks by cosine in pgvector (HNSW), scope before ranking."""

from __future__ import annotations

from collections.abc import Sequence

from memory.adapters.postgres.database import PostgresDatabase
from memory.adapters.postgres.search import nearest
from memory.domain.candidates import Hit
from memory.domain.scope import ScopeFilter
from memory.ports.vector_index import VectorIndex


class PostgresVectorIndex(VectorIndex):
    def __init__(self, database: PostgresDatabase):
        self._db = database

    def search(self, vector: Sequence[float], scope: ScopeFilter, limit: int) -> list[Hit]:
        def read(conn, gen):
            row = conn.execute("SELECT dimension FROM aim_generations WHERE id = %s",
                               (gen,)).fetchone()
            return nearest(conn, gen, vector, scope, limit, row[0] if row else None)
        return self._db.read(read, [])
