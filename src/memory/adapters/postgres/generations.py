"""PostgresGenerations: the IndexGenerations port over one Postgres database.

Publishing switches the one pointer row in the stage's own transaction; superseded
generations are kept (`keep` of them) and collected once grace_seconds old, with the note
rows no generation holds any more.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime, timezone

import psycopg

from memory.adapters.postgres.database import PostgresDatabase, translated
from memory.adapters.postgres.stage import PostgresIndexStage
from memory.domain.refresh import GenerationInfo, ManifestEntry
from memory.ports.errors import StoreError
from memory.ports.index_generations import IndexGenerations, ReadSnapshot

_INFO = ("SELECT id, created, notes, chunks, vectors, model_id, dimension, chunking "
         "FROM aim_generations WHERE id = %s AND state <> 'staged'")


class PostgresGenerations(IndexGenerations):
    def __init__(self, database: PostgresDatabase):
        self._db = database
        self._manifests: dict[str, Mapping[str, ManifestEntry]] = {}  # immutable per id
        self._lock = threading.Lock()

    def current(self) -> GenerationInfo | None:
        return self._db.read(self._info, None)

    @contextmanager
    def snapshot(self) -> Iterator[ReadSnapshot]:
        with self._db.pinned() as generation:
            info = self._db.run(lambda conn: self._info(conn, generation)) if generation else None
            yield ReadSnapshot(info)

    @translated
    def stage(self, base: str | None) -> PostgresIndexStage:
        self._db.open()
        conn = psycopg.connect(self._db.url, autocommit=False)
        try:
            current = self._db.published(conn)
            if base is not None and base != current:
                raise StoreError(f"base index generation {base} is not the current one "
                                 f"({current})")
            seq = conn.execute("SELECT nextval(pg_get_serial_sequence('aim_generations', "
                               "'seq'))").fetchone()[0]
            generation = f"pg-{datetime.now(timezone.utc):%Y%m%dT%H%M%S}-{seq:06d}"
            created = datetime.now(timezone.utc).isoformat(timespec="seconds")
            conn.execute("INSERT INTO aim_generations (id, seq, created, state) "
                         "VALUES (%s, %s, %s, 'staged')", (generation, seq, created))
            if base is not None:
                conn.execute("INSERT INTO aim_members (gen, note_row, memory_id, path) "
                             "SELECT %s, note_row, memory_id, path FROM aim_members "
                             "WHERE gen = %s", (generation, base))
                conn.execute("INSERT INTO aim_manifest (gen, path, content_hash, size, "
                             "mtime_ns) SELECT %s, path, content_hash, size, mtime_ns "
                             "FROM aim_manifest WHERE gen = %s", (generation, base))
        except BaseException:
            conn.close()
            raise
        return PostgresIndexStage(conn, generation, created)

    @translated
    def collect(self, keep: int, grace_seconds: float) -> list[str]:
        def work(conn: psycopg.Connection) -> list[str]:
            with conn.transaction():
                old = [r[0] for r in conn.execute(
                    "SELECT id FROM aim_generations WHERE state = 'superseded' "
                    "ORDER BY seq DESC OFFSET %s", (max(0, keep - 1),))]  # keep counts current
                gone = [r[0] for r in conn.execute(
                    "DELETE FROM aim_generations WHERE id = ANY(%s) AND superseded_at "
                    "<= now() - make_interval(secs => %s) RETURNING id",
                    (old, max(0.0, grace_seconds)))]
                if gone:
                    conn.execute("DELETE FROM aim_notes n WHERE NOT EXISTS "
                                 "(SELECT 1 FROM aim_members m WHERE m.note_row = n.row)")
            return gone
        removed = self._db.run(work)
        with self._lock:
            for generation in removed:
                self._manifests.pop(generation, None)
        return removed

    def check_current(self) -> list[str]:
        def work(conn: psycopg.Connection) -> list[str]:
            pointer = self._db.published(conn)
            if pointer is None:
                return []
            state = conn.execute("SELECT state FROM aim_generations WHERE id = %s",
                                 (pointer,)).fetchone()
            if state is None or state[0] != "published":
                return [f"the pointer names index generation {pointer}, which the "
                        f"database does not hold as published"]
            return []
        return self._db.run(work)

    def _info(self, conn: psycopg.Connection, generation: str) -> GenerationInfo | None:
        row = conn.execute(_INFO, (generation,)).fetchone()
        if row is None:
            return None
        gid, created, notes, chunks, vectors, model_id, dimension, chunking = row
        return GenerationInfo(id=gid, created=created, notes=notes, chunks=chunks,
                              vectors=vectors, model_id=model_id, dimension=dimension,
                              schema_version=1, chunking=chunking,
                              manifest=self._manifest(conn, gid))

    def _manifest(self, conn: psycopg.Connection, generation: str) -> Mapping[str, ManifestEntry]:
        with self._lock:
            known = self._manifests.get(generation)
        if known is not None:
            return known
        rows = conn.execute("SELECT path, content_hash, size, mtime_ns FROM aim_manifest "
                            "WHERE gen = %s", (generation,)).fetchall()
        manifest = {p: ManifestEntry(path=p, content_hash=h, size=s, mtime_ns=m)
                    for p, h, s, m in rows}
        with self._lock:
            self._manifests[generation] = manifest
        return manifest
