"""SqliteEmbeddingCache: vectors by (model id, content hash), shared by processes via WAL."""

from __future__ import annotations

import json
import os
import threading
from array import array
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import apsw

from memory.adapters.sqlite.connection import open_shared, store_errors
from memory.adapters.sqlite.queries import as_blob
from memory.ports.embedding_cache import EmbeddingCache

_BATCH = 500


class SqliteEmbeddingCache(EmbeddingCache):
    """<state_dir>/cache/embeddings.sqlite; vectors are float32 and come back as array('f')."""

    def __init__(self, state_dir: str | os.PathLike[str], busy_timeout_s: float = 10.0):
        self.path = Path(state_dir) / "cache" / "embeddings.sqlite"
        self._busy_ms = int(busy_timeout_s * 1000)
        self._lock = threading.Lock()
        self._conn: apsw.Connection | None = None
        self._file: tuple[int, int] | None = None  # (st_dev, st_ino) of the open file

    def get_many(self, model_id: str, hashes: Iterable[str]) -> dict[str, Sequence[float]]:
        wanted = list(dict.fromkeys(hashes))
        found: dict[str, Sequence[float]] = {}
        with self._lock, store_errors("cannot read the embedding cache"):
            conn = self._connection()
            for i in range(0, len(wanted), _BATCH):
                rows = conn.execute(
                    "SELECT hash, vector FROM embeddings WHERE model_id = ? "
                    "AND hash IN (SELECT value FROM json_each(?))",
                    (model_id, json.dumps(wanted[i:i + _BATCH])))
                for digest, blob in rows:
                    found[digest] = array("f", blob)
        return found

    def put_many(self, model_id: str, vectors: Mapping[str, Sequence[float]]) -> None:
        rows = [(model_id, digest, as_blob(vector)) for digest, vector in vectors.items()]
        if not rows:
            return
        with self._lock, store_errors("cannot write the embedding cache"):
            conn = self._connection()
            # IMMEDIATE takes the write lock up front, so two writers wait (busy timeout)
            # instead of failing on a lock upgrade.
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.executemany("INSERT OR REPLACE INTO embeddings (model_id, hash, vector) "
                                 "VALUES (?, ?, ?)", rows)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise

    def close(self) -> None:
        with self._lock:
            self._close()

    def _close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
            self._file = None

    def _connection(self) -> apsw.Connection:
        # A long-lived process (the MCP server) outlives a user deleting the state folder:
        # the open connection would keep using the unlinked file, so nothing written would
        # persist and every vector would look cached. Reopen when the file is not ours.
        if self._conn is not None and self._identity() != self._file:
            self._close()
        if self._conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = open_shared(self.path, self._busy_ms)
            conn.execute("CREATE TABLE IF NOT EXISTS embeddings (model_id TEXT NOT NULL, "
                         "hash TEXT NOT NULL, vector BLOB NOT NULL, "
                         "PRIMARY KEY (model_id, hash)) WITHOUT ROWID")
            self._conn, self._file = conn, self._identity()
        return self._conn

    def _identity(self) -> tuple[int, int] | None:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return None
        return (st.st_dev, st.st_ino)
