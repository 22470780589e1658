"""SqliteLexicalIndex and SqliteVectorIndex: bm25 and KNN with the scope applied before ranking."""

from __future__ import annotations

import numpy as np
import pytest

from memory.adapters.sqlite import (SqliteGenerations, SqliteIndex, SqliteLexicalIndex,
                                    SqliteNoteCatalogue, SqliteVectorIndex)
from memory.adapters.sqlite.queries import lexical
from memory.domain.notes import Chunk, Note, NoteDocument, Status
from memory.domain.refresh import ManifestEntry
from memory.domain.scope import ScopeFilter, StatusFilter
from memory.ports.errors import StoreError
from memory.ports.lexical_index import LexicalIndex
from memory.ports.note_catalogue import NoteCatalogue
from memory.ports.vector_index import VectorIndex

DIM = 8
ANY = ScopeFilter(status=StatusFilter.ANY)


def make_doc(memory_id: str, *texts: str, **fields) -> NoteDocument:
    path = fields.pop("path", f"notes/{memory_id}.md")
    chunks = tuple(Chunk.create(memory_id=memory_id, path=path, heading="", start_line=i + 1,
                                end_line=i + 1, text=text, ordinal=i)
                   for i, text in enumerate(texts))
    note = Note(memory_id=memory_id, path=path, title=fields.pop("title", memory_id), **fields)
    return NoteDocument(note=note, chunks=chunks, lines=texts)


def unit(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(DIM)
    return v / np.linalg.norm(v)


class Built:
    def __init__(self, state, docs, vectors=None, mode="matrix"):
        gens = SqliteGenerations(SqliteIndex(state))
        stage = gens.stage(None)
        for doc in docs:
            vecs = None if vectors is None else [vectors[c.chunk_id] for c in doc.chunks]
            stage.add(doc, ManifestEntry(path=doc.note.path, content_hash="h", size=1,
                                         mtime_ns=1), vecs)
        stage.publish("m", DIM if vectors else None, {})
        reader = SqliteIndex(state)
        self.reader = reader
        self.lexical, self.catalogue = SqliteLexicalIndex(reader), SqliteNoteCatalogue(reader)
        # "matrix": the in-memory matrix, waited for; "sqlite-vec": vec0 KNN every time.
        self.vectors = SqliteVectorIndex(reader, in_memory=mode == "matrix",
                                         wait_for_matrix=True)


VECTOR_MODES = pytest.mark.parametrize("mode", ["matrix", "sqlite-vec"])


def ids(hits) -> list[str]:
    return [h.chunk.chunk_id for h in hits]


def test_readers_implement_their_ports(tmp_path):
    built = Built(tmp_path, [make_doc("a", "text")])
    assert isinstance(built.lexical, LexicalIndex) and isinstance(built.catalogue, NoteCatalogue)
    assert isinstance(built.vectors, VectorIndex)


HOSTILE = ['"', '""', "*", "NEAR(", "NEAR(a b", "foo-bar", "-x", "", "   ", "\x00", "a\x00b",
           "AND", "OR NOT", "(((", "col:term", "^start", "'; DROP TABLE notes; --",
           "Ünïcödé café", "日本語 テキスト", "emoji 🚀 rocket", "a" * 5000, "x " * 500,
           "{indexed}: word", "alpha+beta", "NOT", "the of and"]


@pytest.mark.parametrize("query", HOSTILE)
def test_hostile_queries_never_raise(tmp_path_factory, query):
    state = tmp_path_factory.getbasetemp() / "hostile"
    if not state.exists():
        Built(state, [make_doc("a", "foo bar baz café the of and", "alpha beta x")])
    hits = SqliteLexicalIndex(SqliteIndex(state)).search(query, ANY, 5)
    assert isinstance(hits, list)
    if not query.strip("\x00 "):
        assert hits == []


def test_words_match_across_diacritics_and_stems(tmp_path):
    built = Built(tmp_path, [make_doc("a", "Retrying the café connection"), make_doc("b", "other")])
    assert ids(built.lexical.search("cafe retries", ANY, 5)) == ["a#0"]
    assert ids(built.lexical.search("the", ANY, 5)) == ["a#0"]  # only stopwords: keep them


def test_identifier_ranks_exact_match_first(tmp_path):
    docs = [make_doc("plain", "alpha alpha alpha team notes about alpha"),
            make_doc("ticket", "we fixed ALPHA-142 yesterday in the build"),
            make_doc("path", "the launcher lives in scripts and is hidden"),
            make_doc("script", "see scripts/launch-hidden.vbs for the hook")]
    built = Built(tmp_path, docs)
    assert ids(built.lexical.search("ALPHA-142", ANY, 5))[0] == "ticket#0"
    assert ids(built.lexical.search("alpha-142 regression", ANY, 5))[0] == "ticket#0"
    assert ids(built.lexical.search("scripts/launch-hidden.vbs", ANY, 5))[0] == "script#0"
    assert all(h.score > 0 for h in built.lexical.search("alpha", ANY, 5))


def _scoped_corpus():
    # The best match for every query lives in repository "other"; "mine" holds weaker ones.
    docs = [make_doc("best", "deploy deploy deploy deploy pipeline", repository="other"),
            make_doc("mine1", "deploy pipeline notes", "unrelated words", repository="mine"),
            make_doc("mine2", "how we deploy", repository="mine"),
            make_doc("global", "deploy checklist for everyone"),  # cross-cutting
            make_doc("old", "deploy pipeline, archived long ago", repository="mine",
                     status=Status.ARCHIVED)]
    vectors = {c.chunk_id: unit(i) for i, c in enumerate(c for d in docs for c in d.chunks)}
    return docs, vectors


def test_scope_filters_before_lexical_ranking(tmp_path):
    docs, vectors = _scoped_corpus()
    built = Built(tmp_path, docs, vectors)
    assert ids(built.lexical.search("deploy pipeline", ANY, 1)) == ["best#0"]
    hits = built.lexical.search("deploy pipeline", ScopeFilter(repository="mine"), 3)
    assert set(ids(hits)) == {"mine1#0", "mine2#0", "global#0"}
    assert len(built.lexical.search("deploy", ScopeFilter(repository="mine"), 2)) == 2
    assert "old#0" in ids(built.lexical.search(
        "deploy", ScopeFilter(repository="mine", status=StatusFilter.ARCHIVED), 5))


@VECTOR_MODES
def test_scope_filters_before_vector_ranking(tmp_path, mode):
    docs, vectors = _scoped_corpus()
    built = Built(tmp_path, docs, vectors, mode=mode)
    target = vectors["best#0"]
    top = built.vectors.search(target, ANY, 1)
    assert ids(top) == ["best#0"] and top[0].score == pytest.approx(1.0, abs=1e-5)
    hits = built.vectors.search(target, ScopeFilter(repository="mine"), 3)
    assert len(hits) == 3 and "best#0" not in ids(hits) and "old#0" not in ids(hits)
    assert set(ids(hits)) <= {"mine1#0", "mine1#1", "mine2#0", "global#0"}
    expected = sorted((1 - _cos(target, vectors[c]) for c in ids(hits)))
    assert [1 - h.score for h in hits] == pytest.approx(expected, abs=1e-5)
    assert built.vectors.search(target, ScopeFilter(ticket="NONE-1"), 5) == []
    with pytest.raises(StoreError):
        built.vectors.search(np.ones(DIM + 1), ANY, 5)


def _cos(a, b) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_scope_sql_agrees_with_scope_filter_admits(tmp_path):
    notes = [
        dict(memory_id="a", repository="web", root_scope="Work"),
        dict(memory_id="b", related_repos=("WEB", "api"), project="apollo"),
        dict(memory_id="c", ticket="alpha-7", status=Status.NEEDS_REVIEW),
        dict(memory_id="d", superseded_by=("a",)),
        dict(memory_id="e", status=Status.ARCHIVED, root_scope="personal"),
        dict(memory_id="f", path="100%_done/x.md", related_projects=("Apollo",)),
        dict(memory_id="g", path="100xxdone/x.md", repository="api"),
        dict(memory_id="h", path="Repos/Web/Deploy.md", status=Status.SUPERSEDED),
    ]
    docs = [make_doc(n.pop("memory_id"), "word", **n) for n in notes]
    built = Built(tmp_path, docs)
    scopes = [ScopeFilter(), ANY, ScopeFilter(repository="web"), ScopeFilter(repository="API"),
              ScopeFilter(project="apollo", status=StatusFilter.ANY),
              ScopeFilter(ticket="ALPHA-7"), ScopeFilter(ticket="alpha-7", status=StatusFilter.ANY),
              ScopeFilter(ticket="NONE-9", status=StatusFilter.ANY),
              ScopeFilter(status=StatusFilter.SUPERSEDED),
              ScopeFilter(status=StatusFilter.NEEDS_REVIEW), ScopeFilter(root_scope="WORK"),
              ScopeFilter(path_prefix="100%_", status=StatusFilter.ANY),
              ScopeFilter(path_prefix="repos/web", status=StatusFilter.ANY),
              ScopeFilter(repository="web", project="apollo", status=StatusFilter.ANY)]
    every = [d.note for d in docs]
    for scope in scopes:
        expected = sorted(n.memory_id for n in every if scope.admits(n))
        assert sorted(n.memory_id for n in built.catalogue.notes(scope)) == expected, scope
        assert sorted({h.note.memory_id for h in built.lexical.search("word", scope, 50)}) == expected
    assert sorted(n.memory_id for n in built.catalogue.notes()) == sorted(n.memory_id for n in every)


@VECTOR_MODES
def test_vectorless_generation_returns_no_semantic_hits(tmp_path, mode):
    built = Built(tmp_path, [make_doc("a", "text")], mode=mode)
    assert built.vectors.search(unit(1), ANY, 5) == []
    assert ids(built.lexical.search("text", ANY, 5)) == ["a#0"]


@VECTOR_MODES
def test_limit_zero_and_large_limits(tmp_path, mode):
    docs, vectors = _scoped_corpus()
    built = Built(tmp_path, docs, vectors, mode=mode)
    assert built.lexical.search("deploy", ANY, 0) == []
    assert built.vectors.search(unit(0), ANY, 0) == []
    assert len(built.vectors.search(unit(0), ANY, 100_000)) == len(vectors)


@VECTOR_MODES
def test_scoped_knn_equals_brute_force_over_admitted_chunks(tmp_path, mode):
    rng = np.random.default_rng(7)
    docs = [make_doc(f"n{i}", f"chunk a {i}", f"chunk b {i}", repository=f"r{i % 5}",
                     status=Status.ARCHIVED if i % 4 == 0 else Status.ACTIVE) for i in range(400)]
    vectors = {c.chunk_id: rng.standard_normal(DIM) for d in docs for c in d.chunks}
    built = Built(tmp_path, docs, vectors, mode=mode)
    query = rng.standard_normal(DIM)
    for scope in (ScopeFilter(repository="r2"), ScopeFilter(), ANY):
        admitted = [c.chunk_id for d in docs if scope.admits(d.note) for c in d.chunks]
        expected = sorted(admitted, key=lambda cid: -_cos(query, vectors[cid]))[:25]
        hits = built.vectors.search(query, scope, 25)
        assert ids(hits) == expected, scope
        assert [h.score for h in hits] == pytest.approx(
            [_cos(query, vectors[cid]) for cid in expected], abs=1e-5)


@pytest.mark.parametrize("judged_by", ["sql", "matrix"])
@pytest.mark.parametrize("limit", [1, 5, 40])
def test_ranking_the_fts_head_first_gives_the_full_query_result(tmp_path, monkeypatch, limit,
                                                                 judged_by):
    """lexical() judges the scope on the best FTS5 matches only (in SQL, or by the vector
    matrix's scope mask once it is loaded), falling back to the full join when they hold too
    few admitted chunks: the result must be the same either way."""
    from memory.adapters.sqlite import queries
    docs = [make_doc(f"n{i}", f"deploy pipeline step {i} " + "deploy " * (i % 7),
                     f"rollback {i}", repository=f"r{i % 9}", ticket="OPS-1" if i == 77 else None,
                     status=Status.ARCHIVED if i % 4 == 0 else Status.ACTIVE)
            for i in range(300)]
    vectors = {c.chunk_id: unit(i) for i, c in enumerate(c for d in docs for c in d.chunks)}
    built = Built(tmp_path, docs, vectors if judged_by == "matrix" else None)
    assert (built.reader.read(lambda view: view.matrix(wait=True), None) is not None) == \
        (judged_by == "matrix")
    scopes = [ANY, ScopeFilter(), ScopeFilter(repository="r3"), ScopeFilter(ticket="OPS-1"),
              ScopeFilter(repository="r3", status=StatusFilter.ARCHIVED)]
    for scope in scopes:
        monkeypatch.setattr(queries, "LEXICAL_HEAD", 100_000)
        everything = built.lexical.search("deploy pipeline", scope, limit)
        for head in (1, 8, 50):
            monkeypatch.setattr(queries, "LEXICAL_HEAD", head)
            assert [(h.chunk.chunk_id, h.score) for h in
                    built.lexical.search("deploy pipeline", scope, limit)] == \
                [(h.chunk.chunk_id, h.score) for h in everything], (scope, head)
        assert all(scope.admits(h.note) for h in everything)
        assert len(everything) == min(limit, sum(scope.admits(d.note) for d in docs)), scope


def test_the_matrix_holds_every_vector_of_the_generation(tmp_path):
    from memory.adapters.sqlite.vector_matrix import VectorMatrix
    docs, vectors = _scoped_corpus()
    Built(tmp_path, docs, vectors)
    index = SqliteIndex(tmp_path)
    matrix, loaded = index.read(lambda view: (view.matrix(wait=True),
                                              VectorMatrix.load(view.conn, view.seq)), None)
    assert index.serving().vectors.error is None and matrix is not None
    assert matrix.matrix.shape == (len(vectors), DIM)
    assert loaded.rowids.tolist() == matrix.rowids.tolist()
    assert Built(tmp_path / "none", [make_doc("a", "text")])
    assert SqliteIndex(tmp_path / "none").read(
        lambda view: VectorMatrix.load(view.conn, view.seq), "unread") is None


def test_a_narrow_scope_past_the_ranked_head_finds_what_the_full_join_finds(tmp_path):
    """400 notes of another repository outrank every admitted match: the first head holds
    none of them, and the deeper head (judged by the loaded matrix) must give exactly the
    full SQL join's chunks and scores, in its order."""
    crowd = [make_doc(f"crowd-{i}", "alpha alpha alpha", repository="crowd") for i in range(400)]
    quiet = [make_doc(f"quiet-{i}", "alpha " + " ".join(f"filler{j}" for j in range(i + 5)),
                      repository="quiet") for i in range(30)]
    docs = crowd + quiet
    built = Built(tmp_path / "state", docs,
                  {c.chunk_id: unit(n) for n, c in enumerate(c for d in docs for c in d.chunks)})
    scope = ScopeFilter(repository="quiet")
    assert built.vectors.search(unit(1), scope, 1)  # the matrix is loaded: it judges the head
    found = built.lexical.search("alpha", scope, 20)
    joined = built.reader.read(lambda view: lexical(view.conn, "alpha", scope, 20), [])
    assert [(h.chunk.chunk_id, h.score) for h in found] == \
        [(chunk.chunk_id, score) for chunk, score in joined]
    assert len(found) == 20 and all(h.note.repository == "quiet" for h in found)
