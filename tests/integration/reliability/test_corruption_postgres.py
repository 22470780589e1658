"""Guarantee 3 on Postgres: rows edited or deleted behind the indexer's back (a chunk's
text, a note's lines or scope keys, a vector, a manifest row, chunk or member rows, the
pointer naming a missing generation) and embedding-cache rows swapped are reported by
health, crash no tool, never put other text than the note's in an answer, leave a whole
older generation serving (or a packet that says to refresh), and one refresh repairs them.

Each case runs against a server that had the good generation open when the damage
happened, and against one started after it, both with an empty state folder of their own
for the index (the graph is still a file, so graph damage is test_corruption.py's).
"""

from __future__ import annotations

import itertools
import shutil
from urllib.parse import urlsplit, urlunsplit

import numpy as np
import psycopg
import pytest
from psycopg import sql as pgsql
from damage_checks import (NOTES, QUERY, check_damaged, damaged_then_repaired,
                           nothing_served_until_refreshed, every_tool)
from live_root import LiveRoot
from postgres_store import select_only

CACHING = "Repos/atlas/Notes/Caching.md"
_COPIES = itertools.count(1)


def sql(root: LiveRoot, statement: str, params: tuple = ()) -> int:
    """Run one statement on the root's database, as a person with psql would; rows touched."""
    with psycopg.connect(root.store, autocommit=True) as conn:
        touched = conn.execute(statement, params).rowcount
    assert touched, f"the damage touched nothing: {statement}"
    return touched


def of_caching(root: LiveRoot, column: str = "note_row") -> str:
    return (f"{column} IN (SELECT note_row FROM aim_members WHERE gen = "
            f"'{root.index_id()}' AND path = '{CACHING}')")


def damage_chunk_text(root: LiveRoot) -> None:
    sql(root, "UPDATE aim_chunks SET chunk = jsonb_set(chunk, '{text}', "
              "to_jsonb('The atlas cache keeps entries forever.'::text)) WHERE "
              + of_caching(root))


def damage_note_lines(root: LiveRoot) -> None:
    sql(root, "UPDATE aim_notes SET lines = jsonb_set(lines, '{2}', "
              "to_jsonb('The atlas cache keeps entries forever.'::text)) WHERE "
              + of_caching(root, "row"))


def damage_note_scope_keys(root: LiveRoot) -> None:
    sql(root, "UPDATE aim_notes SET root_key = 'elsewhere', effective_status = 'archived' "
              "WHERE " + of_caching(root, "row"))


def damage_vector(root: LiveRoot) -> None:
    """Caching's vectors replaced by another note's: the row is sound SQL, the wrong values."""
    sql(root, "UPDATE aim_chunks SET embedding = (SELECT c.embedding FROM aim_chunks c "
              "JOIN aim_members m ON m.note_row = c.note_row WHERE m.gen = %s AND "
              "m.path = 'Decisions/Timeouts.md' LIMIT 1) WHERE " + of_caching(root),
        (root.index_id(),))


def damage_manifest_row(root: LiveRoot) -> None:
    sql(root, "UPDATE aim_manifest SET content_hash = md5('other') WHERE gen = %s AND path = %s",
        (root.index_id(), CACHING))


def damage_manifest_row_deleted(root: LiveRoot) -> None:
    sql(root, "DELETE FROM aim_manifest WHERE gen = %s AND path = %s", (root.index_id(), CACHING))


def damage_chunk_rows_deleted(root: LiveRoot) -> None:
    sql(root, "DELETE FROM aim_chunks WHERE " + of_caching(root))


def damage_member_rows_deleted(root: LiveRoot) -> None:
    """A generation whose rows are incomplete: one note gone from its membership."""
    sql(root, "DELETE FROM aim_members WHERE gen = %s AND path = 'Decisions/Timeouts.md'",
        (root.index_id(),))


def damage_pointer_missing_generation(root: LiveRoot) -> None:
    sql(root, "UPDATE aim_pointer SET generation = 'pg-20200101T000000-000000'")


DAMAGE = [damage_chunk_text, damage_note_lines, damage_note_scope_keys, damage_vector,
          damage_manifest_row, damage_manifest_row_deleted, damage_chunk_rows_deleted,
          damage_member_rows_deleted, damage_pointer_missing_generation]


@pytest.fixture(scope="module")
def pg_template(tmp_path_factory, warm, test_postgres) -> LiveRoot:
    """Three generations in the database (two full builds, then an incremental one that
    shares the unchanged notes' rows with the second), built once by refresh processes
    (which exit, so the database can be copied as a template)."""
    root = LiveRoot.create(tmp_path_factory.mktemp("pg-template") / "memory", NOTES,
                           store=test_postgres.fresh())
    root.refresh("full")
    root.write("Decisions/Retries.md", "# Retries\n\nRetry idempotent calls twice.\n")
    root.refresh("full")
    root.write("Decisions/Budgets.md", "# Budgets\n\nThe cache budget is two gigabytes.\n")
    root.refresh("index")
    return root


def copy_database(url: str) -> str:
    parts = urlsplit(url)
    name = parts.path.lstrip("/")
    copy = f"{name}_copy{next(_COPIES)}"
    with psycopg.connect(urlunsplit(parts._replace(path="/postgres")), autocommit=True) as conn:
        conn.execute(pgsql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
            pgsql.Identifier(copy), pgsql.Identifier(name)))
    return urlunsplit(parts._replace(path=f"/{copy}"))


@pytest.fixture
def pg_root(pg_template, tmp_path) -> LiveRoot:
    """A copy of the template's notes, state folder and database: the newest generation
    is damaged."""
    shutil.copytree(pg_template.path, tmp_path / "memory", symlinks=True)
    root = LiveRoot(tmp_path / "memory", copy_database(pg_template.store))
    assert len(root.index_generations()) == 3 and root.index_problems() == []
    return root


@pytest.mark.anyio
@pytest.mark.parametrize("damage", DAMAGE, ids=lambda f: f.__name__[7:])
async def test_damaged_postgres_rows_are_reported_served_around_and_repaired(
        pg_root, embedder, damage):
    await damaged_then_repaired(pg_root, embedder, damage, index_damaged=True)


@pytest.mark.anyio
async def test_a_select_only_server_serves_around_damage_it_may_not_record(pg_root, embedder):
    """A team's servers may only SELECT: the damage they find is kept in the process
    (the record for every process waits for the indexer), never a failed tool call."""
    name = urlsplit(pg_root.store).path.strip("/")
    reader = LiveRoot(pg_root.path, select_only(pg_root.store, f"aim_reader_{name}"))
    damage_chunk_text(pg_root)
    for _ in range(2):  # the second round reads with the damage already known
        results = await every_tool(reader.service(embedder))
        check_damaged(pg_root, results, index_damaged=True)
        assert results["memory_search"]["items"], results["memory_search"]


@pytest.mark.anyio
async def test_no_whole_generation_left_says_to_refresh(tmp_path, embedder, test_postgres):
    """One generation, its rows damaged: nothing is served, every packet says to refresh."""
    root = LiveRoot.create(tmp_path / "memory", NOTES, store=test_postgres.fresh())
    root.service(embedder).refresh("full")
    damage_chunk_text(root)
    await nothing_served_until_refreshed(root, embedder)


def index_vectors(root: LiveRoot) -> dict[tuple[str, str], np.ndarray]:
    """(context, text) of each chunk -> the vector the serving generation holds for it."""
    with psycopg.connect(root.store) as conn:
        rows = conn.execute(
            "SELECT c.chunk->>'context', c.chunk->>'text', c.embedding::text FROM aim_chunks c "
            "JOIN aim_members m ON m.note_row = c.note_row WHERE m.gen = %s",
            (root.index_id(),)).fetchall()
    return {(context, text): np.array([float(x) for x in vector.strip("[]").split(",")])
            for context, text, vector in rows}


def test_a_changed_embedding_cache_row_is_a_miss_never_a_wrong_vector(
        tmp_path, embedder, test_postgres):
    from memory.adapters.markdown import MarkdownNoteSource
    root = LiveRoot.create(tmp_path / "memory", NOTES, store=test_postgres.fresh())
    assert root.service(embedder).refresh("full").ok
    # Every cached vector swapped for its neighbour's: each row is well formed, none is right.
    sql(root, "UPDATE aim_embedding_cache e SET vector = o.vector FROM (SELECT hash, "
              "lag(vector) OVER (ORDER BY hash) AS vector FROM aim_embedding_cache) o "
              "WHERE o.hash = e.hash AND o.vector IS NOT NULL")
    service = root.service(embedder)
    report = service.refresh("full")  # every chunk's vector asked of the cache
    assert report.ok, report.as_dict()
    source = MarkdownNoteSource(str(root.path))
    chunks = [c for path in source.scan().files for c in source.load(path).chunks]
    stored = index_vectors(root)
    assert len(stored) == len(chunks)
    for chunk, vector in zip(chunks, embedder.embed_documents([c.indexed_text for c in chunks])):
        held = stored[(chunk.context, chunk.text)]
        cosine = float(held @ np.asarray(vector)) / float(np.linalg.norm(held)
                                                          * np.linalg.norm(vector))
        assert cosine > 0.9999, (chunk.chunk_id, cosine)
    assert service.search(QUERY).items[0].path == CACHING
