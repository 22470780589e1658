"""A scoped vector search on Postgres is answered by the HNSW index (pgvector's iterative
scan goes on until enough chunks pass the scope) and agrees with the exact ranking; a scope
holding fewer chunks than asked for still gets all of them, nearest first."""

from __future__ import annotations

import numpy as np
import pytest

from memory.adapters.markdown import MarkdownNoteSource
from memory.adapters.postgres import PostgresDatabase, PostgresGenerations, PostgresVectorIndex
from memory.domain.refresh import ManifestEntry
from memory.domain.scope import ScopeFilter, StatusFilter

DIM, REPOS, PER_REPO = 32, 20, 30  # a scope admits 1/20 of the chunks: about 10 of the
# 200 nearest that HNSW yields before an iterative scan goes on


@pytest.fixture(scope="module")
def store(test_postgres, tmp_path_factory):
    """REPOS x PER_REPO one-chunk notes with random vectors, and a small repository of 3."""
    root = tmp_path_factory.mktemp("scan") / "root"
    rng = np.random.default_rng(7)
    paths = [f"Repos/r{r}/Notes/n{i}.md" for r in range(REPOS) for i in range(PER_REPO)]
    paths += [f"Repos/small/Notes/n{i}.md" for i in range(3)]
    for path in paths:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(f"# {path}\n\nBody of {path}.\n", encoding="utf-8")
    url = test_postgres.fresh()
    database = PostgresDatabase(url, pool_max=1)  # one backend: its statistics are ours
    source, stage = MarkdownNoteSource(root), PostgresGenerations(database).stage(None)
    vectors = {}
    for path in paths:
        doc = source.load(path)
        vectors[path] = [v / np.linalg.norm(v) for v in rng.standard_normal((len(doc.chunks), DIM))]
        stage.add(doc, ManifestEntry(path=path, content_hash=doc.note.content_hash, size=1,
                                     mtime_ns=1), [list(map(float, v)) for v in vectors[path]])
    stage.publish("random", DIM, {"ok": True})
    yield database, PostgresVectorIndex(database), vectors, rng
    database.close()


def _exact(vectors, query, repo, k):
    scored = [(float(np.dot(v, query)), path) for path, vs in vectors.items()
              if path.startswith(f"Repos/{repo}/") for v in vs]
    return [path for _, path in sorted(scored, reverse=True)[:k]]


def _chunk_reads(database) -> tuple[int, int]:
    """(scans of the HNSW indexes, scans of aim_chunks any other way but by row): an exact
    scan reads the chunks by note or in sequence, the hits are then read by row."""
    def read(conn):
        conn.execute("SELECT pg_stat_force_next_flush()")  # flushed before the next answer
        return conn.execute(
            "SELECT coalesce(sum(i.idx_scan) FILTER (WHERE i.indexrelname LIKE "
            "'aim_chunks_hnsw_%'), 0), coalesce(sum(i.idx_scan) FILTER (WHERE i.indexrelname "
            "NOT LIKE 'aim_chunks_hnsw_%' AND i.indexrelname <> 'aim_chunks_pkey'), 0) "
            "+ max(t.seq_scan) FROM pg_stat_user_indexes i JOIN pg_stat_user_tables t "
            "USING (relid) WHERE t.relname = 'aim_chunks'").fetchone()
    return database.run(read)


def test_a_scoped_search_reads_the_hnsw_index_and_agrees_with_the_exact_scan(store):
    database, index, vectors, rng = store
    agreed = asked = 0
    for query in rng.standard_normal((20, DIM)):
        query = query / np.linalg.norm(query)
        repo = f"r{rng.integers(REPOS)}"
        hnsw, other = _chunk_reads(database)
        hits = index.search(list(map(float, query)),
                            ScopeFilter(repository=repo, status=StatusFilter.ANY), 10)
        assert _chunk_reads(database) == (hnsw + 1, other), "not answered by HNSW alone"
        assert len(hits) == 10 and all(h.note.path.startswith(f"Repos/{repo}/") for h in hits)
        assert all(a.score >= b.score for a, b in zip(hits, hits[1:]))
        agreed += len({h.note.path for h in hits} & set(_exact(vectors, query, repo, 10)))
        asked += 10
    assert agreed / asked >= 0.95


def test_a_scope_smaller_than_the_limit_gets_all_its_chunks_nearest_first(store):
    _, index, vectors, rng = store
    query = rng.standard_normal(DIM)
    query = query / np.linalg.norm(query)
    hits = index.search(list(map(float, query)),
                        ScopeFilter(repository="small", status=StatusFilter.ANY), 10)
    assert [h.note.path for h in hits] == _exact(vectors, query, "small", 10)
    assert len(hits) == 3

