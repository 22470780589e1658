"""The Postgres schema: created once, upgraded in place, and left alone when current, so that
servers connect with a role that may only SELECT."""

from __future__ import annotations

import textwrap
from urllib.parse import urlsplit

import psycopg
import pytest
from postgres_store import select_only

from memory.adapters.markdown import MarkdownNoteSource
from memory.adapters.postgres import (PostgresDatabase, PostgresGenerations, PostgresGraphStore,
                                      PostgresNoteCatalogue)
from memory.adapters.postgres import schema
from memory.domain.refresh import GenerationInfo, ManifestEntry
from memory.ports.errors import StoreError

GRAPH = b'{"directed": true, "multigraph": false, "graph": {}, "nodes": [], "links": []}'


def _published(url: str, tmp_path) -> GenerationInfo:
    """One note indexed and an (empty) graph published by the owner of the database."""
    note = tmp_path / "root" / "Decisions" / "retry.md"
    note.parent.mkdir(parents=True)
    note.write_text(textwrap.dedent("""\
        ---
        memory_id: retry
        ---
        # Retry
        Back off exponentially.
        """), encoding="utf-8")
    doc = MarkdownNoteSource(tmp_path / "root").load("Decisions/retry.md")
    database = PostgresDatabase(url)
    stage = PostgresGenerations(database).stage(None)
    stage.add(doc, ManifestEntry(path=doc.note.path, content_hash=doc.note.content_hash,
                                 size=1, mtime_ns=1), None)
    info = stage.publish(None, None, {"ok": True})
    PostgresGraphStore(database).publish(GenerationInfo(id="g1", created="now"), GRAPH, {})
    database.close()
    return info


def test_a_select_only_role_opens_the_store_and_reads_it(test_postgres, tmp_path):
    url = test_postgres.fresh()
    info = _published(url, tmp_path)
    reader = PostgresDatabase(select_only(url, f"aim_reader_{urlsplit(url).path.strip('/')}"))
    generations = PostgresGenerations(reader)
    assert generations.current().id == info.id
    assert [n.memory_id for n in PostgresNoteCatalogue(reader).notes()] == ["retry"]
    assert PostgresGraphStore(reader).current().id == "g1"
    assert PostgresGraphStore(reader).document("g1") == GRAPH
    with pytest.raises(StoreError, match="permission denied"):
        generations.stage(info.id)  # it reads; it cannot write
    reader.close()


def test_a_database_at_an_older_version_is_upgraded_on_first_open(test_postgres):
    url = test_postgres.fresh()
    PostgresDatabase(url).open()
    with psycopg.connect(url, autocommit=True) as conn:  # as version 1 left it: no graph tables
        conn.execute("DROP TABLE aim_graph_pointer, aim_graphs")
        conn.execute("UPDATE aim_meta SET value = '1' WHERE key = 'schema_version'")
        assert schema.version(conn) == 1
    database = PostgresDatabase(url)
    database.open()
    with psycopg.connect(url, autocommit=True) as conn:
        assert schema.version(conn) == schema.SCHEMA_VERSION
        assert conn.execute("SELECT to_regclass('aim_graphs')").fetchone()[0] is not None
    assert PostgresGraphStore(database).current() is None
    database.close()
