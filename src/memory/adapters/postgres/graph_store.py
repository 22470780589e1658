"""PostgresGraphStore: published graph documents as rows, and the pointer naming the current one.

The document is opaque here (Graphify's node-link JSON, parsed by the Graphify adapter): a
row is written once, compressed, with the sha256 of what is stored; publishing inserts it
and switches `aim_graph_pointer` in one transaction, checked before the commit.
"""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Mapping

import psycopg
from psycopg.types.json import Jsonb

from memory.adapters.postgres.database import PostgresDatabase, translated
from memory.domain.refresh import GenerationInfo
from memory.ports.errors import StoreError

_CURRENT = ("SELECT g.id, g.created, g.notes, g.nodes, g.edges FROM aim_graph_pointer p "
            "JOIN aim_graphs g ON g.id = p.generation")


class PostgresGraphStore:
    """The graph generations of one database; a server reads them with SELECT alone."""

    def __init__(self, database: PostgresDatabase):
        self._db = database

    def stamp(self, loaded: str | None) -> str | None:
        """The pointer alone: a published row never changes."""
        return self._db.run(_pointer)

    def current(self) -> GenerationInfo | None:
        row = self._db.run(lambda conn: conn.execute(_CURRENT).fetchone())
        if row is None:
            return None
        gid, created, notes, nodes, edges = row
        return GenerationInfo(id=gid, created=created, notes=notes, nodes=nodes, edges=edges)

    def document(self, generation: str) -> bytes:
        """The stored document; ValueError when the row is missing, fails its digest or does
        not decompress."""
        row = self._db.run(lambda conn: conn.execute(
            "SELECT document, digest FROM aim_graphs WHERE id = %s", (generation,)).fetchone())
        if row is None:
            raise ValueError(f"the database holds no graph generation {generation}")
        stored, digest = bytes(row[0]), row[1]
        if hashlib.sha256(stored).hexdigest() != digest:
            raise ValueError(f"the graph row of generation {generation} does not match its "
                             "digest (damaged)")
        try:
            return zlib.decompress(stored)
        except zlib.error as e:
            raise ValueError(f"the graph row of generation {generation} does not "
                             f"decompress: {e}") from e

    def sources(self, generation: str) -> Mapping[str, str] | None:
        row = self._db.run(lambda conn: conn.execute(
            "SELECT sources FROM aim_graphs WHERE id = %s", (generation,)).fetchone())
        if row is None or not isinstance(row[0], dict):
            return None
        return {str(p): str(h) for p, h in row[0].items()}

    @translated
    def publish(self, info: GenerationInfo, document: bytes,
                sources: Mapping[str, str]) -> None:
        stored = zlib.compress(document, 6)
        digest = hashlib.sha256(stored).hexdigest()

        def work(conn: psycopg.Connection) -> None:
            with conn.transaction():
                previous = _pointer(conn, lock=True)
                conn.execute(
                    "INSERT INTO aim_graphs (id, created, state, notes, nodes, edges, sources, "
                    "document, digest) VALUES (%s, %s, 'published', %s, %s, %s, %s, %s, %s)",
                    (info.id, info.created, info.notes, info.nodes, info.edges,
                     Jsonb(dict(sources)), stored, digest))
                kept = conn.execute("SELECT encode(sha256(document), 'hex') FROM aim_graphs "
                                    "WHERE id = %s", (info.id,)).fetchone()[0]
                if kept != digest:  # rolled back: the last good graph stays current
                    raise StoreError(f"graph generation {info.id} was not stored as written")
                if previous is not None:
                    conn.execute("UPDATE aim_graphs SET state = 'superseded', superseded_at = "
                                 "now() WHERE id = %s", (previous,))
                conn.execute("INSERT INTO aim_graph_pointer (one, generation) VALUES (true, %s) "
                             "ON CONFLICT (one) DO UPDATE SET generation = EXCLUDED.generation",
                             (info.id,))
        self._db.run(work)

    @translated
    def collect(self, keep: int, grace_seconds: float) -> list[str]:
        def work(conn: psycopg.Connection) -> list[str]:
            with conn.transaction():
                old = [r[0] for r in conn.execute(
                    "SELECT id FROM aim_graphs WHERE state = 'superseded' "
                    "ORDER BY seq DESC OFFSET %s", (max(0, keep - 1),))]  # keep counts current
                return [f"graph-{r[0]}" for r in conn.execute(
                    "DELETE FROM aim_graphs WHERE id = ANY(%s) AND superseded_at <= now() - "
                    "make_interval(secs => %s) AND id NOT IN (SELECT generation FROM "
                    "aim_graph_pointer) RETURNING id", (old, max(0.0, grace_seconds)))]
        return self._db.run(work)


def _pointer(conn: psycopg.Connection, *, lock: bool = False) -> str | None:
    row = conn.execute("SELECT generation FROM aim_graph_pointer"
                       + (" FOR UPDATE" if lock else "")).fetchone()
    return row[0] if row else None
