"""Row seals of the Postgres index and what serves when one fails.

Each note, chunk and manifest row is written with an md5 of its values, computed by the
INSERT itself; a row edited behind the indexer's back keeps its old seal. Reads check the
seals of the rows they return, check_current() the whole generation; a failure records the
generation in aim_damage, shared by every process, and reads move to the newest generation
that is neither damaged nor staged.
"""

from __future__ import annotations

import psycopg

from memory.ports.errors import StoreError

# The column of each NoteKeys key (the domain computes them, so SQL agrees with admits()).
KEY_COLUMNS = {"status": "effective_status", "root": "root_key", "ticket": "ticket_key",
               "path": "path_key", "repositories": "repo_keys", "projects": "project_keys",
               "cross_cutting": "cross_cutting"}
NOTE_COLUMNS = ("memory_id", "path", "note", "lines", "names", *KEY_COLUMNS.values())
NOTE_TYPES = ("text", "text", "jsonb", "jsonb", "text[]", "text", "text", "text", "text",
              "text[]", "text[]", "boolean")
CHUNK_COLUMNS = ("note_row", "ordinal", "chunk", "tsv", "length", "dim", "embedding")
CHUNK_TYPES = ("bigint", "int", "jsonb", "tsvector", "int", "int", "vector")
MANIFEST_COLUMNS = ("path", "content_hash", "size", "mtime_ns")
MANIFEST_TYPES = ("text", "text", "bigint", "bigint")


class RowDamaged(StoreError):
    """A row of the generation being read fails its seal: it was changed after it was written."""


def seal(alias: str, columns: tuple[str, ...]) -> str:
    """The seal of a row as SQL; a vector goes in by its binary form (its text form would
    print 384 floats per row)."""
    plain = [c for c in columns if c != "embedding"]
    value = f"md5(ROW({', '.join(f'{alias}.{c}' for c in plain)})::text)"
    if "embedding" in columns:
        value += f" || md5(coalesce(vector_send({alias}.embedding), ''::bytea))"
    return value


def sound(alias: str, columns: tuple[str, ...]) -> str:
    """SQL that is true when the row's stored seal matches its values."""
    return f"coalesce({alias}.seal = {seal(alias, columns)}, false)"


NOTE_SOUND = sound("n", NOTE_COLUMNS)
CHUNK_SOUND = sound("c", CHUNK_COLUMNS)
MANIFEST_SOUND = sound("f", MANIFEST_COLUMNS)


def sealed_insert(table: str, columns: tuple[str, ...], types: tuple[str, ...],
                  returning: str = "", sealed: tuple[str, ...] | None = None) -> str:
    """INSERT of one row from %s parameters (in `columns` order) with the seal of the
    `sealed` columns (all of them by default)."""
    values = ", ".join(f"%s::{t} AS {c}" for c, t in zip(columns, types))
    return (f"INSERT INTO {table} ({', '.join(columns)}, seal) SELECT v.*, "
            f"{seal('v', sealed or columns)} FROM (SELECT {values}) v {returning}")


def checked(is_sound: bool, what: str, generation: str) -> None:
    if not is_sound:
        raise RowDamaged(f"index generation {generation} is damaged: {what} fails its seal "
                         f"(changed after it was written); run a refresh")


# What serves: the generation the pointer names unless it is recorded damaged, else the
# newest kept one that is not (a superseded generation is whole: its rows never change).
SERVING = """
SELECT g.id FROM aim_generations g
WHERE g.state IN ('published', 'superseded')
  AND NOT EXISTS (SELECT 1 FROM aim_damage d WHERE d.gen = g.id)
  AND g.id <> ALL(%s::text[])
ORDER BY g.id = (SELECT generation FROM aim_pointer) DESC NULLS LAST, g.seq DESC LIMIT 1
"""

_VERIFY = f"""
SELECT g.notes, g.chunks, g.vectors,
  (SELECT count(*) FROM aim_members m WHERE m.gen = g.id),
  (SELECT count(*) FROM aim_manifest f WHERE f.gen = g.id),
  k.held, k.embedded,
  (SELECT count(*) FROM aim_members m JOIN aim_notes n ON n.row = m.note_row
   WHERE m.gen = g.id AND n.row > %(notes_from)s
   AND NOT ({NOTE_SOUND} AND n.memory_id = m.memory_id AND n.path = m.path)),
  (SELECT count(*) FROM aim_members m JOIN aim_chunks c ON c.note_row = m.note_row
   WHERE m.gen = g.id AND c.row > %(chunks_from)s AND NOT {CHUNK_SOUND}),
  (SELECT count(*) FROM aim_manifest f WHERE f.gen = g.id AND NOT {MANIFEST_SOUND}),
  (SELECT count(*) FROM aim_members m WHERE m.gen = g.id AND NOT EXISTS
   (SELECT 1 FROM aim_manifest f WHERE f.gen = m.gen AND f.path = m.path)),
  (SELECT coalesce(max(m.note_row), 0) FROM aim_members m WHERE m.gen = g.id),
  k.top_chunk
FROM aim_generations g, LATERAL (
  SELECT count(c.row) AS held, count(c.embedding) AS embedded,
         coalesce(max(c.row), 0) AS top_chunk
  FROM aim_members m JOIN aim_chunks c ON c.note_row = m.note_row WHERE m.gen = g.id) k
WHERE g.id = %(gen)s
"""


def verify(conn: psycopg.Connection, generation: str,
           since: tuple[int, int] = (0, 0)) -> tuple[list[str], tuple[int, int]]:
    """What is wrong with a generation's rows, empty when it is whole: its counts against
    its record, its manifest's seals and the seals of its note and chunk rows above `since`
    (row ids only grow: the rows written after those a process has verified already).
    Returns the problems and the row ids verified up to."""
    row = conn.execute(_VERIFY, {"gen": generation, "notes_from": since[0],
                                 "chunks_from": since[1]}).fetchone()
    if row is None:
        return [f"index generation {generation} is not in the database"], since
    notes, chunks, vectors, members, manifest, held, embedded, *bad, top_note, top_chunk = row
    counts = [("notes", notes, members), ("manifest entries", notes, manifest),
              ("chunks", chunks, held), ("vectors", vectors, embedded)]
    found = [f"{what}: {have} in the database, {want} recorded at publish"
             for what, want, have in counts if want != have]
    found += [f"{count} {what} fail their seals" for what, count in
              zip(("note rows", "chunk rows", "manifest rows"), bad[:3]) if count]
    if bad[3]:
        found.append(f"{bad[3]} notes have no manifest entry")
    if found:
        return [f"index generation {generation} is damaged: {'; '.join(found)}; "
                f"run a refresh"], since
    return [], (max(since[0], top_note), max(since[1], top_chunk))


def record(conn: psycopg.Connection, generation: str, problem: str) -> None:
    """Mark a generation damaged for every process (the first problem found is kept); a
    role that may not write (a SELECT-only server) leaves that to the next refresh."""
    try:
        with conn.transaction():  # a savepoint when inside one: a refusal spoils nothing
            conn.execute("INSERT INTO aim_damage (gen, problem) VALUES (%s, %s) "
                         "ON CONFLICT (gen) DO NOTHING", (generation, problem[:1000]))
    except (psycopg.errors.InsufficientPrivilege, psycopg.errors.ReadOnlySqlTransaction):
        pass


def recorded(conn: psycopg.Connection, generation: str) -> str | None:
    row = conn.execute("SELECT problem FROM aim_damage WHERE gen = %s", (generation,)).fetchone()
    return row[0] if row else None
