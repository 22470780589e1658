"""Tables of the Postgres index: immutable note and chunk rows, generations as membership.

A note row (and its chunks, text and vector) is written once and shared by every generation
that holds it; a generation is its membership rows plus its manifest, so a one-note refresh
copies a few integers per note instead of the corpus, and old generations cost little until
they are collected. `aim_pointer` is the one row a publish switches.
"""

from __future__ import annotations

import re

import psycopg

from memory.ports.errors import StoreUnsupported

# hnsw.iterative_scan came in 0.8: without it a scoped search misses the HNSW index.
PGVECTOR_NEEDED = (0, 8)
SCHEMA_VERSION = 3  # 2: the graph generations (GRAPH_DDL); 3: row seals (SEALS_DDL)
LOCK_SCHEMA = 0x61696D01  # advisory lock key held while creating the tables

DDL = """
CREATE EXTENSION IF NOT EXISTS vector;
CREATE TABLE IF NOT EXISTS aim_meta (key text PRIMARY KEY, value jsonb NOT NULL);
CREATE TABLE IF NOT EXISTS aim_pointer (
  one boolean PRIMARY KEY DEFAULT true CHECK (one), generation text NOT NULL);
CREATE TABLE IF NOT EXISTS aim_generations (
  id text PRIMARY KEY, seq bigserial UNIQUE, created text NOT NULL, state text NOT NULL,
  model_id text, dimension int, chunking text, validation jsonb,
  notes int NOT NULL DEFAULT 0, chunks int NOT NULL DEFAULT 0, vectors int NOT NULL DEFAULT 0,
  terms bigint NOT NULL DEFAULT 0, published_at timestamptz, superseded_at timestamptz);
CREATE TABLE IF NOT EXISTS aim_notes (
  row bigserial PRIMARY KEY, memory_id text NOT NULL, path text NOT NULL,
  note jsonb NOT NULL, lines jsonb NOT NULL, names text[] NOT NULL,
  effective_status text NOT NULL, root_key text NOT NULL, ticket_key text NOT NULL,
  path_key text NOT NULL, repo_keys text[] NOT NULL, project_keys text[] NOT NULL,
  cross_cutting boolean NOT NULL);
CREATE INDEX IF NOT EXISTS aim_notes_names ON aim_notes USING gin (names);
CREATE TABLE IF NOT EXISTS aim_chunks (
  row bigserial PRIMARY KEY, note_row bigint NOT NULL REFERENCES aim_notes ON DELETE CASCADE,
  ordinal int NOT NULL, chunk jsonb NOT NULL, tsv tsvector NOT NULL, length int NOT NULL,
  dim int, embedding vector);
CREATE INDEX IF NOT EXISTS aim_chunks_by_note ON aim_chunks (note_row, ordinal);
CREATE INDEX IF NOT EXISTS aim_chunks_tsv ON aim_chunks USING gin (tsv);
CREATE TABLE IF NOT EXISTS aim_members (
  gen text NOT NULL REFERENCES aim_generations ON DELETE CASCADE,
  note_row bigint NOT NULL REFERENCES aim_notes, memory_id text NOT NULL, path text NOT NULL,
  PRIMARY KEY (gen, memory_id), UNIQUE (gen, path));
CREATE INDEX IF NOT EXISTS aim_members_by_note ON aim_members (note_row, gen);
CREATE TABLE IF NOT EXISTS aim_manifest (
  gen text NOT NULL REFERENCES aim_generations ON DELETE CASCADE, path text NOT NULL,
  content_hash text NOT NULL, size bigint NOT NULL, mtime_ns bigint NOT NULL,
  PRIMARY KEY (gen, path));
CREATE TABLE IF NOT EXISTS aim_embedding_cache (
  model_id text NOT NULL, hash text NOT NULL, vector real[] NOT NULL,
  PRIMARY KEY (model_id, hash));
"""

# The graph of each generation: one node-link document (zlib-compressed, with the sha256 of
# what is stored) per row, written once; `aim_graph_pointer` is the one row a publish
# switches, and its reference keeps the current graph from being collected.
GRAPH_DDL = """
CREATE TABLE IF NOT EXISTS aim_graphs (
  id text PRIMARY KEY, seq bigserial UNIQUE, created text NOT NULL,
  state text NOT NULL CHECK (state IN ('published', 'superseded')),
  notes int NOT NULL, nodes int NOT NULL, edges int NOT NULL, sources jsonb NOT NULL,
  document bytea NOT NULL, digest text NOT NULL,
  published_at timestamptz NOT NULL DEFAULT now(), superseded_at timestamptz);
CREATE TABLE IF NOT EXISTS aim_graph_pointer (
  one boolean PRIMARY KEY DEFAULT true CHECK (one),
  generation text NOT NULL REFERENCES aim_graphs);
"""

# Row seals and damage records (seals.py; docs/reliability.md, guarantee 3). Each column is
# added only when missing: ALTER TABLE takes an exclusive lock even when it changes nothing.
SEALS_DDL = """
DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['aim_notes', 'aim_chunks', 'aim_manifest'] LOOP
    IF NOT EXISTS (SELECT 1 FROM information_schema.columns
                   WHERE table_schema = current_schema() AND table_name = t
                   AND column_name = 'seal') THEN
      EXECUTE format('ALTER TABLE %I ADD COLUMN seal text', t);
    END IF;
  END LOOP;
  IF NOT EXISTS (SELECT 1 FROM information_schema.columns
                 WHERE table_schema = current_schema() AND table_name = 'aim_embedding_cache'
                 AND column_name = 'seal') THEN
    ALTER TABLE aim_embedding_cache ADD COLUMN seal bigint;
  END IF;
END $$;
CREATE TABLE IF NOT EXISTS aim_damage (
  gen text PRIMARY KEY, problem text NOT NULL, found_at timestamptz NOT NULL DEFAULT now());
"""


# The pgvector installed in this database, and the one CREATE EXTENSION would install.
_PGVECTOR = ("SELECT (SELECT extversion FROM pg_extension WHERE extname = 'vector'), "
             "(SELECT default_version FROM pg_available_extensions WHERE name = 'vector')")


def pgvector_release(version: str) -> tuple[int, ...] | None:
    """'0.8.6' as (0, 8, 6), compared as numbers ('0.10.0' is newer than '0.8.6'); None for
    a version string that does not start with one."""
    match = re.match(r"\s*(\d+)(?:\.(\d+))?(?:\.(\d+))?", version)
    return tuple(int(part) for part in match.groups() if part is not None) if match else None


def pgvector_supported(version: str) -> bool:
    release = pgvector_release(version)
    return release is not None and release >= PGVECTOR_NEEDED


def require_pgvector(conn: psycopg.Connection) -> None:
    """Refuse a database whose pgvector is older than PGVECTOR_NEEDED (or that has none to
    install), naming the version found and the one needed."""
    problem = pgvector_problem(*conn.execute(_PGVECTOR).fetchone())
    if problem:
        raise StoreUnsupported(problem)


def pgvector_problem(installed: str | None, available: str | None) -> str | None:
    """Why a database with this pgvector installed (None: not yet) and this one on offer
    for CREATE EXTENSION (None: none) cannot hold the store; None when it can."""
    needed = "pgvector " + ".".join(map(str, PGVECTOR_NEEDED)) + " or newer"
    if installed is None and available is None:
        return f"the server has no pgvector (the `vector` extension); ai-memory needs {needed}"
    if pgvector_supported(installed or available or ""):
        return None
    if installed is None:
        return (f"the server offers pgvector {available}; ai-memory needs {needed} "
                f"(for iterative HNSW scans): upgrade pgvector on the server")
    fix = ("run ALTER EXTENSION vector UPDATE in this database"
           if available and pgvector_supported(available) else "upgrade pgvector on the server, "
           "then run ALTER EXTENSION vector UPDATE in this database")
    return (f"pgvector {installed} is installed in this database; ai-memory needs {needed} "
            f"(for iterative HNSW scans): {fix}")


def create(conn: psycopg.Connection) -> None:
    """Create what is missing, one process at a time (CREATE IF NOT EXISTS races itself).

    A schema already at this version is left alone after one SELECT: no DDL and no lock,
    so a server may connect with a role that holds only SELECT."""
    if version(conn) >= SCHEMA_VERSION:
        return
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_SCHEMA,))
        conn.execute(DDL)
        conn.execute(GRAPH_DDL)
        conn.execute(SEALS_DDL)
        conn.execute("INSERT INTO aim_meta (key, value) VALUES ('schema_version', %s) "
                     "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value "
                     "WHERE (aim_meta.value)::int < (EXCLUDED.value)::int",
                     (psycopg.types.json.Jsonb(SCHEMA_VERSION),))


def version(conn: psycopg.Connection) -> int:
    """The schema version the database records; 0 for a database without our tables."""
    try:
        row = conn.execute("SELECT value FROM aim_meta WHERE key = 'schema_version'").fetchone()
    except psycopg.errors.UndefinedTable:
        return 0
    return row[0] if row and isinstance(row[0], int) else 0


def hnsw_index(conn: psycopg.Connection, dimension: int) -> None:
    """The HNSW (cosine) index over the vectors of one dimension; pgvector indexes a typed
    column only, so each dimension has its own partial expression index."""
    conn.execute(f"CREATE INDEX IF NOT EXISTS aim_chunks_hnsw_{int(dimension)} ON aim_chunks "
                 f"USING hnsw ((embedding::vector({int(dimension)})) vector_cosine_ops) "
                 f"WHERE dim = {int(dimension)}")
