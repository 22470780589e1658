"""Corpora, query sets and a timed query pass shared by the adapter, ablation and scale benchmarks.

Everything expensive (generated roots, index states, the exported ONNX model) is built once
under AI_MEMORY_BENCH_DIR (default /tmp/ai-memory-bench) and reused by later runs.
"""

from __future__ import annotations

import cProfile
import hashlib
import json
import os
import random
import resource
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from pathlib import Path

from dependency_injector import providers

import memory
from memory.adapters.inmemory import (DeterministicEmbedder, FixedClock, InMemoryChunkStore,
                                      InMemoryEmbeddingCache, InMemoryGenerations, InMemoryIndex,
                                      InMemoryLock, InMemoryRefreshHistory)
from memory.adapters.markdown import MarkdownNoteSource
from memory.application.evaluation import percentile, summarize
from memory.application.refresh.indexer import Indexer
from memory.application.search.requests import SearchRequest
from memory.domain.evidence import EvidencePacket, Generation
from memory.entrypoints.container import Application, build
from memory.entrypoints.eval_command import load_queries, run_queries
from memory.entrypoints.settings import Settings

BENCHMARKS = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCHMARKS))
from generate_root import CODE, ERRORS, PREFIX, REPOS, TOPICS, generate_root  # noqa: E402

REPO = BENCHMARKS.parent
BENCH_DIR = Path(os.environ.get("AI_MEMORY_BENCH_DIR", "/tmp/ai-memory-bench"))
LOCOMO = REPO.parent / "shared" / "eval" / "locomo-dev"
FIXTURES = BENCHMARKS / "fixtures"
# Ranking reads "today" for review dates; the frozen cases were written against this day.
FROZEN_AT = "2026-11-30T12:00:00Z"
LIMIT = 10
KS = [1, 3, 5, 10]


def stamp() -> dict:
    """Machine load and a digest of the imported src/ (the code may be edited meanwhile;
    PYTHONPATH=<a copy of src> pins a run to one state of it)."""
    digest = hashlib.sha256()
    for path in sorted(Path(memory.__file__).resolve().parents[1].rglob("*.py")):
        digest.update(path.read_bytes())
    return {"loadavg_1m": round(os.getloadavg()[0], 2), "src_digest": digest.hexdigest()[:12]}


def cpu_seconds() -> float:
    """CPU time of this process (all threads) and its finished children.

    The benchmark machine is shared: wall time grows with other people's load, CPU time
    much less, so both are recorded.
    """
    own, children = (resource.getrusage(who) for who in (resource.RUSAGE_SELF,
                                                          resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def env_ints(name: str, default: str) -> list[int]:
    """Comma-separated integers from the environment, e.g. AI_MEMORY_BENCH_SIZES=1000,5000."""
    return [int(x) for x in os.environ.get(name, default).split(",") if x.strip()]


# -- building real states ----------------------------------------------------------------


def _seed_models(state_dir: Path) -> None:
    """Reuse one ONNX export for every state: it is made once per install, not per build."""
    shared, own = BENCH_DIR / "models", state_dir / "cache" / "models"
    if shared.is_dir() and not own.exists():
        shutil.copytree(shared, own)


def _keep_models(state_dir: Path) -> None:
    shared, own = BENCH_DIR / "models", state_dir / "cache" / "models"
    if own.is_dir() and not shared.exists():
        shutil.copytree(own, shared, ignore=shutil.ignore_patterns(".export-*"))


def real_app(root: Path, state_dir: Path, clock: FixedClock | None = None) -> Application:
    """The production container (SQLite, sqlite-vec, MiniLM, Graphify) for root and state."""
    state_dir.mkdir(parents=True, exist_ok=True)
    _seed_models(state_dir)
    app = build(Settings.resolve(str(root), str(state_dir), watch=False))
    if clock is not None:
        app.gateways.clock.override(providers.Object(clock))
    return app


def ready_app(root: Path, state_dir: Path, clock: FixedClock | None = None,
              full: bool = False) -> Application:
    """real_app with a published index and graph, refreshed in full when asked or when
    there is none yet (vectors come from the state's embedding cache when they can)."""
    app = real_app(root, state_dir, clock)
    service = app.use_cases.service()
    embedder = app.gateways.embedder()
    assert embedder.wait_ready(300), f"embedding model not ready: {embedder.state()}"
    _keep_models(state_dir)
    if full or app.gateways.index().current() is None or app.gateways.graph().current() is None:
        assert service.refresh("full").ok
    else:
        service.refresh("index")
    return app


def locomo_app() -> Application:
    """Rebuilt each session: chunking may have changed since the last one (seconds, cached)."""
    return ready_app(LOCOMO / "memory", BENCH_DIR / "locomo-state", full=True)


def fixtures_app() -> Application:
    """The frozen vault, copied, with a fresh full refresh as the frozen test does."""
    root = BENCH_DIR / "fixtures-vault"
    if root.exists():
        shutil.rmtree(root)
    shutil.copytree(FIXTURES / "vault", root)
    return ready_app(root, BENCH_DIR / "fixtures-state", FixedClock(FROZEN_AT), full=True)


def generated_root(notes: int, seed: int = 0, fresh: bool = False) -> Path:
    """BENCH_DIR/gen-<notes>: generate_root's vault, rewritten when fresh or missing."""
    root = BENCH_DIR / f"gen-{notes}"
    marker = root / ".generated"
    if fresh or not marker.exists():
        if root.exists():
            shutil.rmtree(root)
        generate_root(root, notes=notes, seed=seed)
        marker.write_text(json.dumps({"notes": notes, "seed": seed}))
    return root


def lexical_only_app(root: Path, state_dir: Path) -> Application:
    """The production SQLite index of root, built without vectors (no model needed)."""
    app = real_app(root, state_dir)
    app.gateways.embedder.override(
        providers.Object(DeterministicEmbedder(failure="lexical benchmark")))
    if app.gateways.index().current() is None:
        app.use_cases.indexer().refresh("index")
    return app


def hashed_vectors_app(root: Path, state_dir: Path, dimension: int) -> Application:
    """The production SQLite index of root with DeterministicEmbedder vectors of dimension."""
    app = real_app(root, state_dir)
    app.gateways.embedder.override(providers.Object(DeterministicEmbedder(dimension)))
    if app.gateways.index().current() is None:
        app.use_cases.indexer().refresh("index")
    return app


def inmemory_chunk_store(root: Path) -> InMemoryChunkStore:
    """The dict-backed BM25 baseline over the same notes and chunks as the SQLite index."""
    index = InMemoryIndex()
    Indexer(source=MarkdownNoteSource(root), index=InMemoryGenerations(index),
            embedder=DeterministicEmbedder(failure="lexical baseline"),
            cache=InMemoryEmbeddingCache(), lock=InMemoryLock(), clock=FixedClock(),
            history=InMemoryRefreshHistory()).refresh("index")
    return InMemoryChunkStore(index)


# -- query sets --------------------------------------------------------------------------


def locomo_queries() -> list[dict]:
    return load_queries(str(LOCOMO / "queries.jsonl"))


def fixture_cases() -> list[dict]:
    return load_queries(str(FIXTURES / "cases.jsonl"))


def generated_queries(count: int, seed: int = 1) -> list[dict]:
    """Queries an agent would ask of a generate_root vault: topics, identifiers, errors,
    tickets; a third of them scoped to one repository. No labels: for latency only."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        kind = rng.random()
        if kind < 0.4:
            question = f"how did we handle the {rng.choice(TOPICS)}?"
        elif kind < 0.6:
            question = f"where is {rng.choice(CODE)} and why must it stay idempotent"
        elif kind < 0.8:
            question = f"we saw {rng.choice(ERRORS)} in production"
        else:
            repo = rng.choice(REPOS)
            question = f"{PREFIX[repo]}-{rng.randint(100, 400)} {rng.choice(TOPICS)}"
        scope = {"repository": rng.choice(REPOS)} if rng.random() < 1 / 3 else {}
        out.append({"qid": f"gen-{i:04d}", "question": question, "scope": scope,
                    "evidence": []})
    return out


# -- a timed pass over a query set -------------------------------------------------------


class EngineSearch:
    """A RetrievalEngine called the way run_queries calls MemoryService.search."""

    def __init__(self, engine):
        self.engine = engine

    def search(self, query, **filters) -> EvidencePacket:
        return self.engine.search(SearchRequest.parse(query, **filters), Generation())


def timed_pass(benchmark, service, chunks, queries: Sequence[dict], warmup: int = 10) -> dict:
    """Search every query once under pytest-benchmark; score it as `ai-memory eval` does.

    Each benchmark round is one query; latency percentiles come from run_queries' own
    timing (the search call only), which is what `ai-memory eval` reports.
    """
    run_queries(service, chunks, queries[:warmup], limit=LIMIT)
    results: dict[str, dict] = {}
    cpu_ms: list[float] = []

    def one(query):
        started = time.process_time()
        results.update(run_queries(service, chunks, [query], limit=LIMIT))
        cpu_ms.append((time.process_time() - started) * 1000)

    benchmark.pedantic(one, setup=each(queries), rounds=len(queries), iterations=1)
    summary = summarize(queries, results, KS)
    latencies = [r["latency_ms"] for r in results.values()]
    summary["p50_ms"], summary["p95_ms"] = percentile(latencies, 50), percentile(latencies, 95)
    summary["cpu_p50_ms"], summary["cpu_p95_ms"] = percentile(cpu_ms, 50), percentile(cpu_ms, 95)
    return summary


def record_quality(benchmark, summary: dict, **extra) -> dict:
    """Put the headline figures into the benchmark's extra_info (and so its JSON)."""
    row = summary["groups"].get("all", {})
    info = {key: round(row[key], 4) for key in ("R@5", "H@5", "MRR@10", "nDCG@10", "EH@5", "L@5")
            if key in row}
    info.update(n=row.get("n", 0), p50_ms=round(summary["p50_ms"], 2),
                p95_ms=round(summary["p95_ms"], 2), cpu_p50_ms=round(summary["cpu_p50_ms"], 2),
                cpu_p95_ms=round(summary["cpu_p95_ms"], 2), leakage=summary["scope_leakage"],
                no_answer_n=summary["no_answer"]["n"],
                no_answer_accuracy=summary["no_answer"]["accuracy"], **stamp(), **extra)
    benchmark.extra_info.update(info)
    print(f"\n{benchmark.name}: {json.dumps(info)}")
    return info


@contextmanager
def profiled(name: str):
    """cProfile the block into $AI_MEMORY_BENCH_PROFILE/<name>.pstats when that is set.

    pytest-benchmark pauses profilers while it times a round, so profile an extra,
    untimed run of the same work, never the benchmark call itself.
    """
    folder = os.environ.get("AI_MEMORY_BENCH_PROFILE")
    if not folder:
        yield False
        return
    Path(folder).mkdir(parents=True, exist_ok=True)
    profile = cProfile.Profile()
    profile.enable()
    try:
        yield True
    finally:
        profile.disable()
        profile.dump_stats(str(Path(folder) / f"{name}.pstats"))


def cpu_timed(call: Callable, sink: list[float]) -> Callable:
    """call, appending the CPU milliseconds each invocation took to sink."""
    def timed(*args):
        started = time.process_time()
        result = call(*args)
        sink.append((time.process_time() - started) * 1000)
        return result
    return timed


def latencies_of(benchmark) -> list[float]:
    """Per-round seconds of the last pedantic run, in milliseconds."""
    return [s * 1000 for s in benchmark.stats.stats.data]


def percentiles(values: Sequence[float], cpu: Sequence[float] = ()) -> dict:
    out = {"p50_ms": round(percentile(values, 50), 3), "p95_ms": round(percentile(values, 95), 3)}
    if cpu:
        out.update(cpu_p50_ms=round(percentile(cpu, 50), 3),
                   cpu_p95_ms=round(percentile(cpu, 95), 3))
    return {**out, **stamp()}


def each(items: Sequence) -> Callable[[], tuple]:
    """A pedantic setup function handing out items one round at a time."""
    pending = iter(items)
    return lambda: ((next(pending),), {})
