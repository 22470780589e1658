"""The graph on the Postgres store: published as a row, read by servers with no state folder,
damage reported while the last good graph serves, old generations collected."""

from __future__ import annotations

import hashlib
import textwrap
import zlib
from pathlib import Path

import psycopg
import pytest

from memory.adapters.graphify import GraphifyGenerations, GraphifyGraph
from memory.adapters.graphify.graph_picture import GraphifyGraphPicture
from memory.adapters.graphify.stored import StoredGraphGenerations
from memory.adapters.markdown import MarkdownNoteSource
from memory.adapters.postgres import PostgresDatabase, PostgresGraphStore
from memory.domain.errors import Unavailable
from memory.ports.errors import StoreError

VAULT = {
    "Decisions/retry-policy.md": "---\nmemory_id: retry-policy\nrelated: ['[[deploy]]']\n---\n"
                                 "# Retry policy\nBack off.\n",
    "Decisions/deploy.md": "---\nmemory_id: deploy\n---\n# Deploy\nSee [[rollback]].\n",
    "Decisions/rollback.md": "---\nmemory_id: rollback\n---\n# Rollback\nUndo it.\n",
}


@pytest.fixture
def kit(tmp_path, test_postgres):
    root = tmp_path / "root"
    for rel, text in VAULT.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(textwrap.dedent(text), encoding="utf-8")
    url = test_postgres.fresh()
    source = MarkdownNoteSource(root)
    docs = [source.load(p) for p in sorted(source.scan().files)]
    generations = StoredGraphGenerations(GraphifyGenerations(root, tmp_path / "indexer-state"),
                                         PostgresGraphStore(PostgresDatabase(url)))
    return {"url": url, "docs": docs, "generations": generations,
            "state": tmp_path / "indexer-state"}


def _server(url: str) -> GraphifyGraph:
    """A provider over a pool of its own, as in a server process on another host."""
    return GraphifyGraph(PostgresGraphStore(PostgresDatabase(url)))


def test_a_published_graph_lives_in_the_database_not_in_the_state_folder(kit):
    info = kit["generations"].build(kit["docs"]).publish()
    graph_dir = kit["state"] / "graph"
    assert not (graph_dir / "CURRENT").exists()
    assert not list(graph_dir.glob("gen-*"))
    assert not list((graph_dir / "staging").iterdir())  # the built stage went with publish
    server = _server(kit["url"])
    assert server.current().id == info.id and server.current().notes == 3
    assert [n.node for n in server.neighbors("retry-policy", 1)] == ["deploy"]
    picture = GraphifyGraphPicture(PostgresGraphStore(PostgresDatabase(kit["url"]))).picture()
    assert picture.generation == info.id
    assert {"retry-policy", "deploy", "rollback"} <= {n.memory_id for n in picture.nodes}
    assert kit["generations"].current_sources() == {
        d.note.path: d.note.content_hash for d in kit["docs"]}


def _garbage(url: str, generation: str, how: str) -> None:
    """Damage one stored row: flipped bytes (the digest no longer matches) or a document
    that is stored whole but is no graph."""
    with psycopg.connect(url, autocommit=True) as conn:
        if how == "bytes":
            conn.execute("UPDATE aim_graphs SET document = 'garbage'::bytea WHERE id = %s",
                         (generation,))
        else:
            stored = zlib.compress(b'{"nodes": [')
            conn.execute("UPDATE aim_graphs SET document = %s, digest = %s WHERE id = %s",
                         (stored, hashlib.sha256(stored).hexdigest(), generation))


@pytest.mark.parametrize("how", ["bytes", "not-a-graph"])
def test_a_damaged_graph_row_is_a_problem_and_the_last_good_keeps_serving(kit, how):
    first = kit["generations"].build(kit["docs"]).publish()
    loaded, fresh = _server(kit["url"]), _server(kit["url"])
    assert loaded.current().id == first.id
    second = kit["generations"].build(kit["docs"]).publish()
    _garbage(kit["url"], second.id, how)
    assert loaded.current().id == first.id
    assert loaded.neighbors("retry-policy", 1)
    assert any(second.id in p and first.id in p for p in loaded.problems())
    assert fresh.current() is None and fresh.related(["retry-policy"], 5) == []
    with pytest.raises(Unavailable):
        fresh.neighbors("retry-policy", 1)
    problems = kit["generations"].check_current()
    assert problems and second.id in problems[0]
    with pytest.raises(Unavailable):
        GraphifyGraphPicture(PostgresGraphStore(PostgresDatabase(kit["url"]))).picture()


def test_collect_keeps_the_current_graph_and_the_newest_superseded(kit):
    ids = [kit["generations"].build(kit["docs"]).publish().id for _ in range(3)]
    assert kit["generations"].collect(keep=2, grace_seconds=3600) == []  # within the grace
    assert kit["generations"].collect(keep=2, grace_seconds=0) == [f"graph-{ids[0]}"]
    with psycopg.connect(kit["url"]) as conn:
        left = [r[0] for r in conn.execute("SELECT id FROM aim_graphs ORDER BY seq")]
    assert left == ids[1:]
    assert _server(kit["url"]).current().id == ids[2]


def test_a_failed_publish_changes_nothing(kit):
    first = kit["generations"].build(kit["docs"]).publish()
    stage = kit["generations"].build(kit["docs"])
    with psycopg.connect(kit["url"], autocommit=True) as conn:  # the id is taken already
        conn.execute("INSERT INTO aim_graphs (id, created, state, notes, nodes, edges, "
                     "sources, document, digest) VALUES (%s, '', 'superseded', 0, 0, 0, "
                     "'{}', '', '')", (stage.id,))
    with pytest.raises(StoreError):
        stage.publish()
    assert _server(kit["url"]).current().id == first.id
    assert kit["generations"].check_current() == []
