"""SqliteEmbeddingCache: vectors by (model id, content hash), shared by processes via WAL.

A cache is only a shortcut, so damage may cost embedding time, never a wrong vector: each
row carries a CRC of what it holds, a row failing it is a miss (and is deleted, so the
chunk is embedded again), and a file SQLite itself finds damaged is removed and the cache
starts empty.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from array import array
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import apsw
import numpy as np

from memory.adapters.sqlite.connection import DAMAGE, store_errors
from memory.adapters.sqlite.queries import as_blob
from memory.adapters.sqlite.rows import crc
from memory.ports.embedding_cache import EmbeddingCache

log = logging.getLogger(__name__)

_BATCH = 500
_SELECT = ("SELECT CAST(hash AS BLOB), vector, crc FROM embeddings WHERE model_id = ? "
           "AND hash IN (SELECT value FROM json_each(?))")


def _sealed(model_id: str, digest: bytes, blob: bytes) -> int:
    return crc((model_id, digest, blob))


def _plausible(blob) -> bool:
    """A row from before rows had a CRC: it must at least be a finite float32 vector."""
    if not isinstance(blob, bytes) or not blob or len(blob) % 4:
        return False
    return bool(np.isfinite(np.frombuffer(blob, dtype=np.float32)).all())


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
        with self._lock, store_errors(f"cannot read the embedding cache {self.path}"):
            try:
                bad, unsealed = self._read(model_id, wanted, found)
            except DAMAGE as exc:
                self._set_aside(exc)
                return found
            self._repair(model_id, bad, unsealed)
        return found

    def put_many(self, model_id: str, vectors: Mapping[str, Sequence[float]]) -> None:
        rows = []
        for digest, vector in vectors.items():
            blob = as_blob(vector)
            rows.append((model_id, digest, blob, _sealed(model_id, digest.encode(), blob)))
        if not rows:
            return
        with self._lock, store_errors(f"cannot write the embedding cache {self.path}"):
            try:
                self._write(rows)
            except DAMAGE as exc:
                self._set_aside(exc)
                self._write(rows)

    def close(self) -> None:
        with self._lock:
            self._close()

    # -- internals ---------------------------------------------------------------------

    def _read(self, model_id: str, wanted: list[str],
              found: dict[str, Sequence[float]]) -> tuple[list[str], list[tuple]]:
        conn = self._connection()
        keys = set(wanted)
        bad, unsealed = [], []
        for i in range(0, len(wanted), _BATCH):
            for raw, blob, stored in conn.execute(_SELECT, (model_id,
                                                            json.dumps(wanted[i:i + _BATCH]))):
                digest = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else ""
                if digest not in keys:
                    continue
                if stored is None and _plausible(blob):
                    unsealed.append((_sealed(model_id, raw, blob), model_id, digest))
                elif stored is None or not isinstance(blob, bytes) \
                        or _sealed(model_id, raw, blob) != stored or len(blob) % 4:
                    bad.append(digest)
                    continue
                found[digest] = array("f", blob)
        return bad, unsealed

    def _repair(self, model_id: str, bad: list[str], unsealed: list[tuple]) -> None:
        """Forget rows that failed their CRC; seal rows written before rows had one."""
        if not (bad or unsealed):
            return
        if bad:
            log.warning("embedding cache: %d damaged vectors dropped, they are embedded again",
                        len(bad))
        try:
            self._transaction(lambda conn: (
                conn.executemany("DELETE FROM embeddings WHERE model_id = ? AND hash = ?",
                                 [(model_id, d) for d in bad]),
                conn.executemany("UPDATE embeddings SET crc = ? WHERE model_id = ? AND hash = ?",
                                 unsealed)))
        except (apsw.Error, OSError) as exc:  # read-only or busy: the rows stay misses
            log.warning("embedding cache not repaired: %s", exc)

    def _write(self, rows: list[tuple]) -> None:
        self._transaction(lambda conn: conn.executemany(
            "INSERT OR REPLACE INTO embeddings (model_id, hash, vector, crc) VALUES (?, ?, ?, ?)",
            rows))

    def _transaction(self, work) -> None:
        conn = self._connection()
        # IMMEDIATE takes the write lock up front, so two writers wait (busy timeout)
        # instead of failing on a lock upgrade.
        conn.execute("BEGIN IMMEDIATE")
        try:
            work(conn)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def _set_aside(self, exc: BaseException) -> None:
        """A damaged file: drop it (and its WAL) and start an empty cache."""
        log.warning("embedding cache %s is damaged (%s): starting an empty one", self.path, exc)
        self._close()
        for suffix in ("", "-wal", "-shm"):
            Path(f"{self.path}{suffix}").unlink(missing_ok=True)

    def _close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
            self._file = None

    def _connection(self) -> apsw.Connection:
        # A long-lived process (the MCP server) outlives a user deleting the state folder,
        # or another process dropping a damaged cache: the open connection would keep using
        # the unlinked file. Reopen when the file is not ours.
        if self._conn is not None and self._identity() != self._file:
            self._close()
        if self._conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            try:
                conn = self._open(str(self.path), apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE)
            except (apsw.ReadOnlyError, apsw.CantOpenError):
                # A read-only folder where no process made the -shm file: without a -wal
                # file every vector is in the database file, which nothing can change.
                if Path(f"{self.path}-wal").exists() or not self.path.exists():
                    raise
                conn = self._open(self.path.resolve().as_uri() + "?immutable=1",
                                  apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
            self._conn, self._file = conn, self._identity()
        return self._conn

    def _open(self, name: str, flags: int) -> apsw.Connection:
        conn = apsw.Connection(name, flags=flags)
        try:
            conn.set_busy_timeout(self._busy_ms)
            if conn.execute("PRAGMA journal_mode").fetchall()[0][0] not in ("wal", "off"):
                conn.execute("PRAGMA journal_mode=WAL").fetchall()
            conn.execute("PRAGMA synchronous=NORMAL").fetchall()
            self._schema(conn)
        except BaseException:
            conn.close()
            raise
        return conn

    @staticmethod
    def _schema(conn: apsw.Connection) -> None:
        # Only what is missing is written: a read-only cache still serves its vectors.
        columns = {row[1] for row in conn.execute("PRAGMA table_info(embeddings)")}
        if not columns:
            conn.execute("CREATE TABLE IF NOT EXISTS embeddings (model_id TEXT NOT NULL, "
                         "hash TEXT NOT NULL, vector BLOB NOT NULL, crc INTEGER, "
                         "PRIMARY KEY (model_id, hash)) WITHOUT ROWID")
        elif "crc" not in columns:  # a cache of an earlier version: rows are sealed as read
            conn.execute("ALTER TABLE embeddings ADD COLUMN crc INTEGER")

    def _identity(self) -> tuple[int, int] | None:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return None
        return (st.st_dev, st.st_ino)
