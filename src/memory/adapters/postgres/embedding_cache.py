"""PostgresEmbeddingCache: vectors by (model id, chunk content hash), shared by every indexer.

Each row carries a CRC-32 of its key and float32 bytes: a vector changed behind the
indexer's back is a miss (embedded again), never a wrong vector in the index.
"""

from __future__ import annotations

import math
import zlib
from array import array
from collections.abc import Iterable, Mapping, Sequence

from memory.adapters.postgres.database import PostgresDatabase
from memory.ports.embedding_cache import EmbeddingCache


def seal(model_id: str, digest: str, vector: Sequence[float]) -> int:
    key = f"{model_id}\x00{digest}\x00".encode("utf-8", "surrogatepass")
    return zlib.crc32(array("f", vector).tobytes(), zlib.crc32(key))


class PostgresEmbeddingCache(EmbeddingCache):
    def __init__(self, database: PostgresDatabase):
        self._db = database

    def get_many(self, model_id: str, hashes: Iterable[str]) -> dict[str, Sequence[float]]:
        wanted = list(dict.fromkeys(hashes))
        if not wanted:
            return {}
        rows = self._db.run(lambda conn: conn.execute(
            "SELECT hash, vector, seal FROM aim_embedding_cache WHERE model_id = %s AND "
            "hash = ANY(%s)", (model_id, wanted)).fetchall())
        # A damaged entry (empty, NaN, or not its seal) is a miss: the chunk is embedded again.
        return {h: list(v) for h, v, sealed in rows
                if v and all(math.isfinite(x) for x in v) and sealed == seal(model_id, h, v)}

    def put_many(self, model_id: str, vectors: Mapping[str, Sequence[float]]) -> None:
        rows = [(model_id, h, values, seal(model_id, h, values))
                for h, values in ((h, [float(x) for x in v]) for h, v in vectors.items())]
        if not rows:
            return

        def write(conn) -> None:
            with conn.transaction(), conn.cursor() as cur:
                cur.executemany("INSERT INTO aim_embedding_cache (model_id, hash, vector, seal) "
                                "VALUES (%s, %s, %s, %s) ON CONFLICT (model_id, hash) "
                                "DO UPDATE SET vector = EXCLUDED.vector, seal = EXCLUDED.seal",
                                rows)
        self._db.run(write)
