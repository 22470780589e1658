"""Tables of one index generation and the mapping between their rows and domain values."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import apsw

from memory.domain.notes import Chunk, Note, ScopeKind, Status
from memory.domain.refresh import ManifestEntry

SCHEMA_VERSION = 1

DDL = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
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
  cross_cutting INTEGER NOT NULL, lines TEXT NOT NULL
);
CREATE TABLE note_names (
  name TEXT NOT NULL, memory_id TEXT NOT NULL, PRIMARY KEY (name, memory_id)
) WITHOUT ROWID;
CREATE INDEX note_names_by_note ON note_names(memory_id);
CREATE TABLE chunks (
  rowid INTEGER PRIMARY KEY, chunk_id TEXT NOT NULL UNIQUE, memory_id TEXT NOT NULL,
  path TEXT NOT NULL, heading TEXT NOT NULL, start_line INTEGER NOT NULL,
  end_line INTEGER NOT NULL, text TEXT NOT NULL, context TEXT NOT NULL,
  ordinal INTEGER NOT NULL, hash TEXT NOT NULL
);
CREATE INDEX chunks_by_note ON chunks(memory_id, ordinal);
CREATE VIRTUAL TABLE chunk_fts USING fts5(
  indexed, content='', contentless_delete=1,
  tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TABLE manifest (
  path TEXT PRIMARY KEY, content_hash TEXT NOT NULL, size INTEGER NOT NULL,
  mtime_ns INTEGER NOT NULL
);
"""

_TUPLES = ("related", "related_repos", "related_projects", "supersedes", "superseded_by",
           "tags", "aliases", "links")
NOTE_FIELDS = ("memory_id", "path", "title", "type", "root_scope", "scope_kind", "scope_id",
               "repository", "project", "ticket", "status", "created", "updated",
               "review_after", *_TUPLES, "content_hash", "line_count")
# Keys ScopeFilter compares against, computed in Python so SQL agrees with admits().
_SCOPE_KEYS = ("effective_status", "root_key", "ticket_key", "path_key", "repo_keys",
               "project_keys", "cross_cutting")
NOTE_COLUMNS = ", ".join(f"n.{name}" for name in NOTE_FIELDS)
CHUNK_FIELDS = ("chunk_id", "memory_id", "path", "heading", "start_line", "end_line", "text",
                "context", "ordinal", "hash")
CHUNK_COLUMNS = ", ".join(f"c.{name}" for name in CHUNK_FIELDS)

INSERT_NOTE = (f"INSERT INTO notes ({', '.join((*NOTE_FIELDS, *_SCOPE_KEYS, 'lines'))}) "
               f"VALUES ({', '.join('?' * (len(NOTE_FIELDS) + len(_SCOPE_KEYS) + 1))})")
INSERT_CHUNK = (f"INSERT INTO chunks ({', '.join(CHUNK_FIELDS)}) "
                f"VALUES ({', '.join('?' * len(CHUNK_FIELDS))})")


def create(conn: apsw.Connection) -> None:
    conn.execute(DDL)
    write_meta(conn, {"schema_version": SCHEMA_VERSION})


def create_vectors(conn: apsw.Connection, dimension: int) -> None:
    conn.execute(f"CREATE VIRTUAL TABLE chunk_vec USING vec0("
                 f"embedding float[{int(dimension)}] distance_metric=cosine)")
    write_meta(conn, {"vector_dimension": int(dimension)})


def has_vectors(conn: apsw.Connection) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'chunk_vec'").fetchone() is not None


def write_meta(conn: apsw.Connection, values: Mapping[str, Any]) -> None:
    conn.executemany("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                     [(key, json.dumps(value, default=str)) for key, value in values.items()])


def read_meta(conn: apsw.Connection) -> dict[str, Any]:
    return {key: json.loads(value) for key, value in conn.execute("SELECT key, value FROM meta")}


def note_row(note: Note, lines: Sequence[str]) -> tuple:
    values = []
    for name in NOTE_FIELDS:
        value = getattr(note, name)
        if name in _TUPLES:
            value = json.dumps(list(value))
        elif isinstance(value, (ScopeKind, Status)):
            value = value.value
        values.append(value)
    keys = (note.effective_status.value, (note.root_scope or "").lower(),
            (note.ticket or "").upper(), note.path.lower(),
            json.dumps(sorted(note.repositories)), json.dumps(sorted(note.projects)),
            int(note.is_cross_cutting))
    return (*values, *keys, json.dumps(list(lines)))


def note_from_row(row: Sequence) -> Note:
    values = dict(zip(NOTE_FIELDS, row))
    for name in _TUPLES:
        values[name] = tuple(json.loads(values[name]))
    values["scope_kind"] = ScopeKind(values["scope_kind"]) if values["scope_kind"] else None
    values["status"] = Status(values["status"])
    return Note(**values)


def note_names(note: Note) -> set[str]:
    """Lower-cased names find() matches: Note.names plus the path without .md."""
    names = {n.lower() for n in note.names}
    if note.path.lower().endswith(".md"):
        names.add(note.path[:-3].lower())
    return names


def chunk_row(chunk: Chunk) -> tuple:
    return tuple(getattr(chunk, name) for name in CHUNK_FIELDS)


def chunk_from_row(row: Sequence) -> Chunk:
    return Chunk(**dict(zip(CHUNK_FIELDS, row)))


def manifest_of(conn: apsw.Connection) -> dict[str, ManifestEntry]:
    return {path: ManifestEntry(path=path, content_hash=digest, size=size, mtime_ns=mtime)
            for path, digest, size, mtime in
            conn.execute("SELECT path, content_hash, size, mtime_ns FROM manifest")}
