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

from memory.adapters.postgres import seals
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
        self._verified = (0, 0)  # note and chunk row ids this process has checked up to

    def current(self) -> GenerationInfo | None:
        return self._db.read(self._info, None)

    @contextmanager
    def snapshot(self) -> Iterator[ReadSnapshot]:
        with self._db.pinned():
            yield ReadSnapshot(self._db.read(self._info, None))

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
                             "mtime_ns, seal) SELECT %s, path, content_hash, size, mtime_ns, "
                             "seal FROM aim_manifest WHERE gen = %s", (generation, base))
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
                conn.execute("DELETE FROM aim_damage d WHERE NOT EXISTS "
                             "(SELECT 1 FROM aim_generations g WHERE g.id = d.gen)")
            return gone
        removed = self._db.run(work)
        with self._lock:
            for generation in removed:
                self._manifests.pop(generation, None)
        return removed

    @translated
    def check_current(self) -> list[str]:
        """The pointer, the generation it names (every count and row seal: what a reader
        would trip over later) and what serves instead when that one is damaged."""
        return self._db.run(self._problems)

    def _problems(self, conn: psycopg.Connection) -> list[str]:
        row = conn.execute("SELECT p.generation, g.state FROM aim_pointer p "
                           "LEFT JOIN aim_generations g ON g.id = p.generation").fetchone()
        pointer, state = row if row else (None, None)
        problems = []
        if pointer is not None and state != "published":
            problems.append(f"the pointer names index generation {pointer}, which the "
                            f"database does not hold as published")
        elif pointer is not None:
            found = self._verify(conn, pointer)
            problems += found or [p for p in [seals.recorded(conn, pointer)] if p]
        serving = self._whole(conn, pointer)
        if pointer is None and serving is not None:
            problems.append(f"the pointer row is missing; serving index generation {serving}")
        elif serving != pointer:
            problems.append(f"serving the older index generation {serving} instead"
                            if serving else "no whole index generation is left to serve")
        return problems

    def _whole(self, conn: psycopg.Connection, pointer: str | None) -> str | None:
        """What serves, once every older generation it falls back to is verified too
        (they share note rows with the damaged one)."""
        serving = self._db.published(conn)
        while serving is not None and serving != pointer and self._verify(conn, serving):
            serving = self._db.published(conn)
        return serving

    def _verify(self, conn: psycopg.Connection, generation: str) -> list[str]:
        """seals.verify, the seals of the rows this process has not checked yet (all of
        them on its first call: a fresh process, such as a refresh, checks everything);
        a damaged generation is recorded for every process."""
        with self._lock:
            since = self._verified
        found, upto = seals.verify(conn, generation, since)
        if found:
            self._db.mark_damaged(conn, generation, found[0])
        with self._lock:
            self._verified = (max(self._verified[0], upto[0]), max(self._verified[1], upto[1]))
        return found

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
        rows = conn.execute(f"SELECT path, content_hash, size, mtime_ns, {seals.MANIFEST_SOUND} "
                            f"FROM aim_manifest f WHERE gen = %s", (generation,)).fetchall()
        for *_, is_sound in rows:
            seals.checked(is_sound, "a manifest row", generation)
        manifest = {p: ManifestEntry(path=p, content_hash=h, size=s, mtime_ns=m)
                    for p, h, s, m, _ in rows}
        with self._lock:
            self._manifests[generation] = manifest
        return manifest
