"""Vector KNN on the same vectors: the product's two paths (sqlite-vec's vec0 KNN, used
while a generation's matrix loads, and the in-memory matrix it then serves from) against a
plain numpy brute force written here as the baseline.

    .venv/bin/python -m pytest benchmarks/test_vector_adapters.py -s \
        --benchmark-columns=median,mean,max,rounds --benchmark-json=/tmp/vectors.json

The corpus is a generate_root vault of AI_MEMORY_BENCH_VECTOR_NOTES notes (default 10000,
about 30k chunks) indexed by the production SQLite adapter with 384-dimension vectors from
DeterministicEmbedder: both engines scan every admitted vector, so their cost does not
depend on what the vectors mean, and no model run is needed. Scopes: none at all, the
default (active notes), one repository (+ cross-cutting notes), one ticket.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from bench_corpora import (BENCH_DIR, cpu_timed, each, env_ints, generated_queries,
                           generated_root, hashed_vectors_app, latencies_of, percentiles)
from generate_root import REPOS
from memory.adapters.inmemory import DeterministicEmbedder
from memory.adapters.sqlite import SqliteVectorIndex
from memory.domain.notes import Chunk, Note
from memory.domain.scope import ScopeFilter, StatusFilter
from memory.domain.candidates import Hit
from memory.ports.note_catalogue import NoteCatalogue
from memory.ports.vector_index import VectorIndex

NOTES = env_ints("AI_MEMORY_BENCH_VECTOR_NOTES", "10000")[0]
DIMENSION = 384
DEPTH = 50
QUERIES = 100
SCOPES = ("none", "active", "repository", "ticket")


class NumpyVectorIndex(VectorIndex):
    """Brute force over one float32 matrix held in memory (the baseline, not a product adapter).

    Rows are grouped by note; what a scope admits is computed once per scope and kept, as an
    in-memory adapter serving one immutable generation would. A wide scope scores every row
    and masks the rest (a gather would copy most of the matrix); a narrow one gathers.
    """

    def __init__(self, notes: Sequence[Note], chunks: Sequence[Sequence[Chunk]],
                 vectors: np.ndarray):
        self._matrix = np.ascontiguousarray(vectors, dtype=np.float32)
        self._chunks = [c for own in chunks for c in own]
        self._note_of = [n for n, own in zip(notes, chunks) for _ in own]
        self._spans, start = [], 0
        for note, own in zip(notes, chunks):
            self._spans.append((note, start, start + len(own)))
            start += len(own)
        self._scopes: dict[ScopeFilter, tuple[np.ndarray | None, np.ndarray | None]] = {}

    def admitted(self, scope: ScopeFilter) -> tuple[np.ndarray | None, np.ndarray | None]:
        """(rows to gather, rows to mask out); both None when the scope admits everything."""
        if scope not in self._scopes:
            keep = np.zeros(len(self._chunks), dtype=bool)
            for note, a, b in self._spans:
                keep[a:b] = scope.admits(note)
            if keep.all():
                self._scopes[scope] = (None, None)
            elif keep.sum() * 4 < keep.size:
                self._scopes[scope] = (np.flatnonzero(keep), None)
            else:
                self._scopes[scope] = (None, np.flatnonzero(~keep))
        return self._scopes[scope]

    def search(self, vector, scope: ScopeFilter, limit: int) -> list[Hit]:
        query = np.asarray(vector, dtype=np.float32)
        rows, masked = self.admitted(scope)
        scores = self._matrix @ query if rows is None else self._matrix[rows] @ query
        if masked is not None:
            scores[masked] = -np.inf
        k = min(limit, scores.size - (0 if masked is None else masked.size))
        if k <= 0:
            return []
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        picked = top if rows is None else rows[top]
        return [Hit(self._chunks[i], self._note_of[i], float(s))
                for i, s in zip(picked.tolist(), scores[top].tolist())]


def numpy_index(chunks: NoteCatalogue, embedder: DeterministicEmbedder) -> NumpyVectorIndex:
    """The same chunks and vectors the SQLite index holds, read through the NoteCatalogue port."""
    notes = chunks.notes(ScopeFilter(status=StatusFilter.ANY))
    per_note = [tuple(chunks.chunks_of(n.memory_id)) for n in notes]
    texts = [c.indexed_text for own in per_note for c in own]
    return NumpyVectorIndex(notes, per_note, np.asarray(embedder.embed_documents(texts)))


@pytest.fixture(scope="module")
def corpus():
    root = generated_root(NOTES)
    app = hashed_vectors_app(root, BENCH_DIR / f"gen-{NOTES}-hash{DIMENSION}-state", DIMENSION)
    chunks = app.gateways.catalogue()
    embedder = DeterministicEmbedder(DIMENSION)
    notes = chunks.notes(ScopeFilter(status=StatusFilter.ANY))
    tickets = sorted({n.ticket for n in notes if n.ticket})
    rng = random.Random(3)
    scopes = {"none": lambda: ScopeFilter(status=StatusFilter.ANY),
              "active": lambda: ScopeFilter(),
              "repository": lambda: ScopeFilter(repository=rng.choice(REPOS)),
              "ticket": lambda: ScopeFilter(ticket=rng.choice(tickets))}
    vectors = [embedder.embed_query(q["question"]) for q in generated_queries(QUERIES)]
    asked = {name: [(v, make()) for v in vectors] for name, make in scopes.items()}
    with threadpool_limits(limits=1, user_api="blas"):
        sqlite = app.gateways.sqlite()
        yield {"adapters": {"sqlite-vec": SqliteVectorIndex(sqlite, in_memory=False),
                             "sqlite-matrix": SqliteVectorIndex(sqlite, wait_for_matrix=True),
                             "numpy-brute-force": numpy_index(chunks, embedder)},
               "asked": asked, "chunks": app.gateways.index().current().chunks}


@pytest.mark.parametrize("scope", SCOPES)
@pytest.mark.parametrize("adapter", ("sqlite-vec", "sqlite-matrix", "numpy-brute-force"))
def test_knn_latency(benchmark, corpus, adapter, scope):
    index, asked = corpus["adapters"][adapter], corpus["asked"][scope]
    for vector, flt in asked[:5]:
        index.search(vector, flt, DEPTH)  # warm: page cache, numpy scope rows
    found: list[int] = []
    cpu: list[float] = []
    benchmark.pedantic(cpu_timed(lambda vs: found.append(len(index.search(vs[0], vs[1], DEPTH))),
                                 cpu), setup=each(asked), rounds=len(asked), iterations=1)
    info = percentiles(latencies_of(benchmark), cpu)
    info.update(adapter=adapter, scope=scope, chunks=corpus["chunks"], dimension=DIMENSION,
                mean_hits=round(sum(found) / len(found), 1))
    benchmark.extra_info.update(info)
    print(f"\n{benchmark.name}: {info}")


@pytest.mark.parametrize("other", ("sqlite-matrix", "numpy-brute-force"))
@pytest.mark.parametrize("scope", SCOPES)
def test_knn_adapters_agree(corpus, scope, other):
    """Same top-50 similarities as sqlite-vec (which of several tied chunks makes the cut
    may differ): the speed figures compare equal work."""
    sqlite, numpy = (corpus["adapters"][a] for a in ("sqlite-vec", other))
    for vector, flt in corpus["asked"][scope][:20]:
        a = [h.score for h in sqlite.search(vector, flt, DEPTH)]
        b = [h.score for h in numpy.search(vector, flt, DEPTH)]
        assert len(a) == len(b) and np.allclose(a, b, atol=1e-4), (flt, a[:5], b[:5])
