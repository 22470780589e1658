"""Signal ablation on the production stack: lexical, semantic, hybrid, hybrid + graph.

    .venv/bin/python -m pytest benchmarks/test_signal_ablation.py -s \
        --benchmark-columns=median,mean,max,rounds --benchmark-json=/tmp/ablation.json

Corpora: ../shared/eval/locomo-dev (758 project-scoped questions) and the frozen fixtures
(benchmarks/fixtures: vault + cases.jsonl, clock pinned as in the frozen test). Every
variant runs the same MemoryService with the gather step's use_* switches
(SearchConfig.gather); everything else stays at its defaults. Query vectors are not cached: latency includes embedding the query.
"""

from __future__ import annotations

import pytest
from attrs import evolve

from bench_corpora import (fixture_cases, fixtures_app, locomo_app, locomo_queries,
                           record_quality, timed_pass)

VARIANTS = {
    "lexical": dict(use_lexical=True, use_semantic=False, use_graph=False),
    "semantic": dict(use_lexical=False, use_semantic=True, use_graph=False),
    "hybrid": dict(use_lexical=True, use_semantic=True, use_graph=False),
    "hybrid+graph": dict(use_lexical=True, use_semantic=True, use_graph=True),
}


@pytest.fixture(scope="module")
def locomo():
    return locomo_app(), locomo_queries()


@pytest.fixture(scope="module")
def frozen():
    return fixtures_app(), fixture_cases()


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("corpus", ("locomo", "frozen"))
def test_signals(benchmark, request, corpus, variant):
    app, queries = request.getfixturevalue(corpus)
    service = app.use_cases.service()
    config = service.engine.config
    service = service.with_search_config(
        evolve(config, gather=evolve(config.gather, **VARIANTS[variant])))
    summary = timed_pass(benchmark, service, app.gateways.catalogue(), queries)
    record_quality(benchmark, summary, corpus=corpus, variant=variant)
