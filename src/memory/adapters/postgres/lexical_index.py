"""PostgresLexicalIndex: bm25 over the stored lexemes of the generation this thread reads."""

from __future__ import annotations

from memory.adapters.postgres.database import PostgresDatabase
from memory.adapters.postgres.search import lexical
from memory.domain.candidates import Hit
from memory.domain.scope import ScopeFilter
from memory.ports.lexical_index import LexicalIndex


class PostgresLexicalIndex(LexicalIndex):
    def __init__(self, database: PostgresDatabase):
        self._db = database

    def search(self, query: str, scope: ScopeFilter, limit: int) -> list[Hit]:
        return self._db.read(lambda conn, gen: lexical(conn, gen, query, scope, limit), [])
