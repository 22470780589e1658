"""PostgresEmbeddingCache: vectors by (model id, chunk content hash), shared by every indexer."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

from memory.adapters.postgres.database import PostgresDatabase
from memory.ports.embedding_cache import EmbeddingCache


class PostgresEmbeddingCache(EmbeddingCache):
    def __init__(self, database: PostgresDatabase):
        self._db = database

    def get_many(self, model_id: str, hashes: Iterable[str]) -> dict[str, Sequence[float]]:
        wanted = list(dict.fromkeys(hashes))
        if not wanted:
            return {}
        rows = self._db.run(lambda conn: conn.execute(
            "SELECT hash, vector FROM aim_embedding_cache WHERE model_id = %s AND "
            "hash = ANY(%s)", (model_id, wanted)).fetchall())
        # A damaged entry (empty, or NaN) is a miss: the chunk is embedded again.
        return {h: list(v) for h, v in rows if v and all(math.isfinite(x) for x in v)}

    def put_many(self, model_id: str, vectors: Mapping[str, Sequence[float]]) -> None:
        rows = [(model_id, h, [float(x) for x in v]) for h, v in vectors.items()]
        if not rows:
            return

        def write(conn) -> None:
            with conn.transaction(), conn.cursor() as cur:
                cur.executemany("INSERT INTO aim_embedding_cache (model_id, hash, vector) "
                                "VALUES (%s, %s, %s) ON CONFLICT (model_id, hash) "
                                "DO UPDATE SET vector = EXCLUDED.vector", rows)
        self._db.run(write)
