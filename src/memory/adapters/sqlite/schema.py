"""Tables of the index database: one committed state per generation, and the change log.

Schema 2 (schema 1 was one immutable file per generation): the index is one database
updated in place, one write transaction per refresh. Every row carries a CRC of its
values (rows.py). `generations`, `chunk_log` and `manifest_log` record what each
generation changed, so a reader patches what it keeps in memory (vectors, manifests) by
the change instead of reloading the corpus.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import apsw

from memory.adapters.sqlite.rows import IndexDamaged, crc, sealed

SCHEMA_VERSION = 2
LOG_GENERATIONS = 512  # generations whose changes stay in the log

DDL = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL, crc INTEGER NOT NULL);
CREATE TABLE generations (
  seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, created TEXT NOT NULL,
  crc INTEGER NOT NULL
);
CREATE TABLE notes (
  memory_id TEXT PRIMARY KEY, path TEXT NOT NULL UNIQUE, title TEXT NOT NULL,
  type TEXT NOT NULL, root_scope TEXT NOT NULL, scope_kind TEXT, scope_id TEXT,
  repository TEXT, project TEXT, ticket TEXT, status TEXT NOT NULL, created TEXT,
  updated TEXT, review_after TEXT, related TEXT NOT NULL, related_repos TEXT NOT NULL,
  related_projects TEXT NOT NULL, supersedes TEXT NOT NULL, superseded_by TEXT NOT NULL,
  tags TEXT NOT NULL, aliases TEXT NOT NULL, links TEXT NOT NULL,
  content_hash TEXT NOT NULL, line_count INTEGER NOT NULL,
  effective_status TEXT NOT NULL, root_key TEXT NOT NULL, ticket_key TEXT NOT NULL,
  path_key TEXT NOT NULL, repo_keys TEXT NOT NULL, project_keys TEXT NOT NULL,
  cross_cutting INTEGER NOT NULL, crc INTEGER NOT NULL,
  lines TEXT NOT NULL, lines_crc INTEGER NOT NULL
);
CREATE TABLE note_names (
  name TEXT NOT NULL, memory_id TEXT NOT NULL, crc INTEGER NOT NULL,
  PRIMARY KEY (name, memory_id)
) WITHOUT ROWID;
CREATE INDEX note_names_by_note ON note_names(memory_id);
-- AUTOINCREMENT: a chunk's rowid is never reused, so a rowid names one chunk for good and
-- readers patch their vectors by the rowids each generation added and removed.
CREATE TABLE chunks (
  rowid INTEGER PRIMARY KEY AUTOINCREMENT, chunk_id TEXT NOT NULL UNIQUE,
  memory_id TEXT NOT NULL, path TEXT NOT NULL, heading TEXT NOT NULL,
  start_line INTEGER NOT NULL, end_line INTEGER NOT NULL, text TEXT NOT NULL,
  context TEXT NOT NULL, ordinal INTEGER NOT NULL, hash TEXT NOT NULL, crc INTEGER NOT NULL
);
CREATE INDEX chunks_by_note ON chunks(memory_id, ordinal);
CREATE VIRTUAL TABLE chunk_fts USING fts5(
  indexed, content='', contentless_delete=1,
  tokenize='porter unicode61 remove_diacritics 2'
);
-- A plain table, searched with sqlite-vec's distance function: vec0 never reuses the slot
-- of a deleted vector, so in-place updates would grow it with every edit.
CREATE TABLE chunk_vectors (
  rowid INTEGER PRIMARY KEY, embedding BLOB NOT NULL, crc INTEGER NOT NULL
);
CREATE INDEX chunk_vectors_count ON chunk_vectors(crc);
CREATE TABLE manifest (
  path TEXT PRIMARY KEY, content_hash TEXT NOT NULL, size INTEGER NOT NULL,
  mtime_ns INTEGER NOT NULL, crc INTEGER NOT NULL
);
CREATE TABLE chunk_log (
  seq INTEGER NOT NULL, rowid INTEGER NOT NULL, added INTEGER NOT NULL,
  crc INTEGER NOT NULL, PRIMARY KEY (seq, rowid)
) WITHOUT ROWID;
CREATE TABLE manifest_log (
  seq INTEGER NOT NULL, path TEXT NOT NULL, before TEXT, after TEXT, crc INTEGER NOT NULL,
  PRIMARY KEY (seq, path)
) WITHOUT ROWID;
"""


def create(conn: apsw.Connection) -> None:
    conn.execute(DDL)
    write_meta(conn, {"schema_version": SCHEMA_VERSION})


def write_meta(conn: apsw.Connection, values: Mapping[str, Any]) -> None:
    rows = []
    for key, value in values.items():
        text = json.dumps(value, default=str)
        rows.append(sealed((key, text)))
    conn.executemany("INSERT OR REPLACE INTO meta (key, value, crc) VALUES (?, ?, ?)", rows)


def read_meta(conn: apsw.Connection) -> dict[str, Any]:
    meta = {}
    for key, value, stored in conn.execute("SELECT key, value, crc FROM meta"):
        meta[key] = _meta_value(key, value, stored)
    return meta


def meta_value(conn: apsw.Connection, key: str) -> Any:
    row = conn.execute("SELECT value, crc FROM meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else _meta_value(key, *row)


def _meta_value(key: str, value: str, stored: int) -> Any:
    if crc((key, value)) != stored:
        raise IndexDamaged(f"index file is damaged: meta row {key!r} fails its check")
    try:
        return json.loads(value)
    except ValueError as exc:
        raise IndexDamaged(f"index file is damaged: meta row {key!r}: {exc}") from exc


def vector_dimension(conn: apsw.Connection) -> int | None:
    value = meta_value(conn, "vector_dimension")
    return int(value) if value is not None else None


def counts(conn: apsw.Connection) -> dict[str, int]:
    """Rows of notes, chunks and vectors; each count walks a small index, not the rows."""
    def count(table: str) -> int:
        return conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]

    return {"notes": count("notes"), "chunks": count("chunks"),
            "vectors": count("chunk_vectors")}
