"""Lexical adapters on the same chunks: dict-backed BM25 (the baseline) against SQLite FTS5.

    .venv/bin/python -m pytest benchmarks/test_lexical_adapters.py \
        --benchmark-columns=median,mean,max,rounds --benchmark-json=/tmp/lexical.json

Quality runs the same RetrievalEngine with only the lexical signal over each ChunkStore on
../shared/eval/locomo-dev; latency times ChunkStore.search alone (depth 50, each query in
its scope) on locomo-dev and on a generate_root vault of AI_MEMORY_BENCH_LEXICAL_NOTES notes.
"""

from __future__ import annotations

import pytest

from bench_corpora import (BENCH_DIR, LOCOMO, EngineSearch, cpu_timed, each, env_ints,
                           generated_queries, generated_root, inmemory_chunk_store, latencies_of,
                           lexical_only_app, locomo_app, locomo_queries, percentiles,
                           record_quality, timed_pass)
from memory.adapters.inmemory import DeterministicEmbedder, InMemoryIndex, InMemoryVectorIndex
from memory.application.search.retrieval import RetrievalEngine
from memory.application.search.config import GatherConfig, SearchConfig
from memory.domain.scope import ScopeFilter
from memory.entrypoints.eval_command import scope_of

ADAPTERS = ("inmemory-bm25", "sqlite-fts5")
GENERATED_NOTES = env_ints("AI_MEMORY_BENCH_LEXICAL_NOTES", "5000")[0]
GENERATED = f"generated-{GENERATED_NOTES}"
DEPTH = GatherConfig().lexical_depth


@pytest.fixture(scope="module")
def locomo_stores():
    app = locomo_app()
    return {"sqlite-fts5": app.gateways.lexical(),
            "inmemory-bm25": inmemory_chunk_store(LOCOMO / "memory")}


@pytest.fixture(scope="module")
def generated_stores():
    root = generated_root(GENERATED_NOTES)
    app = lexical_only_app(root, BENCH_DIR / f"gen-{GENERATED_NOTES}-lexical-state")
    return {"sqlite-fts5": app.gateways.lexical(), "inmemory-bm25": inmemory_chunk_store(root)}


def _lexical_engine(chunks) -> EngineSearch:
    """The product's engine with the lexical signal only; vectors and graph never asked."""
    config = SearchConfig(gather=GatherConfig(use_lexical=True, use_semantic=False,
                                              use_graph=False))
    return EngineSearch(RetrievalEngine(chunks, chunks, InMemoryVectorIndex(InMemoryIndex()),
                                        DeterministicEmbedder(), None, config))


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_lexical_quality_on_locomo(benchmark, locomo_stores, adapter):
    chunks = locomo_stores[adapter]
    summary = timed_pass(benchmark, _lexical_engine(chunks), chunks, locomo_queries())
    record_quality(benchmark, summary, adapter=adapter, corpus="locomo-dev")


@pytest.mark.parametrize("corpus", ["locomo-dev", GENERATED])
@pytest.mark.parametrize("adapter", ADAPTERS)
def test_lexical_search_latency(benchmark, request, corpus, adapter):
    if corpus == "locomo-dev":
        store = request.getfixturevalue("locomo_stores")[adapter]
        queries = locomo_queries()
    else:
        store = request.getfixturevalue("generated_stores")[adapter]
        queries = generated_queries(200)
    asked = [(q["question"], ScopeFilter(**scope_of(q))) for q in queries]
    for question, scope in asked[:10]:
        store.search(question, scope, DEPTH)  # warm caches and the BM25 table
    found: list[int] = []
    cpu: list[float] = []
    benchmark.pedantic(cpu_timed(lambda qs: found.append(len(store.search(qs[0], qs[1], DEPTH))),
                                 cpu), setup=each(asked), rounds=len(asked), iterations=1)
    info = percentiles(latencies_of(benchmark), cpu)
    info.update(adapter=adapter, corpus=corpus, queries=len(asked),
                mean_hits=round(sum(found) / len(found), 1))
    benchmark.extra_info.update(info)
    print(f"\n{benchmark.name}: {info}")
