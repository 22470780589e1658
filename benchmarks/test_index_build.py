"""Index build on a generated 2,000-note root: full build and chunks/s, one-note refresh,
search p50/p95, through the production container (Markdown, SQLite + sqlite-vec, MiniLM).

    .venv/bin/python -m pytest benchmarks/test_index_build.py -q -p no:cacheprovider \
        --benchmark-only -s

The model is loaded (and its ONNX export made, once per machine) before anything is timed.
Besides wall time, CPU seconds (this process and its children, e.g. the Graphify builder)
are recorded: on a shared machine they say what the work costs whatever else is running.
The figures go to docs/benchmarks.md, section "Index build (2,000 notes)".
"""

from __future__ import annotations

import itertools
import os
import random
import resource
import statistics
import sys
import time
from pathlib import Path

import pytest
from dependency_injector import providers

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generate_root import CODE, ERRORS, generate_root  # noqa: E402

from memory.domain.scope import ScopeFilter, StatusFilter  # noqa: E402
from memory.entrypoints.container import build  # noqa: E402
from memory.entrypoints.settings import Settings  # noqa: E402

NOTES = 2000
SEED = 0
QUERIES = 100
REFRESH_ROUNDS = 5
FIGURES: dict[str, object] = {}
_EDITS = itertools.count()


class Bench:
    """The generated root, the loaded model, and a container per state folder."""

    def __init__(self, base: Path):
        self.root = generate_root(base / "root", notes=NOTES, seed=SEED)
        self.state = base / "state"
        self.embedder = build(Settings.resolve(str(self.root), str(self.state))).gateways.embedder()
        started = time.perf_counter()
        assert self.embedder.wait_ready(900), self.embedder.state()
        FIGURES["model_load_s"] = round(time.perf_counter() - started, 2)
        self.app = None

    def fresh_app(self):
        """A new container on the state folder, sharing the already loaded model."""
        app = build(Settings.resolve(str(self.root), str(self.state)))
        app.gateways.embedder.override(providers.Object(self.embedder))
        return app


@pytest.fixture(scope="module")
def bench(tmp_path_factory) -> Bench:
    return Bench(tmp_path_factory.mktemp("index-build"))


def _load() -> float:
    return round(os.getloadavg()[0], 2)


def _cpu_s() -> float:
    """CPU seconds used so far by this process and its finished children."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def test_full_build(benchmark, bench):
    """Cold: no index, no embedding cache, no graph; every chunk is embedded."""
    bench.app = bench.fresh_app()
    service = bench.app.use_cases.service()
    FIGURES["load_before"] = _load()
    cpu = _cpu_s()
    report = benchmark.pedantic(lambda: service.refresh("full"), rounds=1, iterations=1)
    cpu = _cpu_s() - cpu
    assert report.ok, report.as_dict()
    seconds = benchmark.stats.stats.max
    info = bench.app.gateways.index().current()
    index = report.stage("index")
    assert info.notes == NOTES and index.embedded > 0 and index.reused_vectors == 0
    FIGURES.update(notes=info.notes, chunks=info.chunks, embedded=index.embedded,
                   full_build_s=round(seconds, 1), chunks_per_s=round(info.chunks / seconds, 1),
                   embedded_per_s=round(index.embedded / seconds, 1), full_build_cpu_s=round(cpu),
                   chunks_per_cpu_s=round(info.chunks / cpu, 1),
                   **{f"{s.stage}_stage_s": round(s.seconds, 1) for s in report.stages})
    benchmark.extra_info.update(FIGURES)


def _edit(bench: Bench):
    """Append one line to a different note each round (a one-note change)."""
    paths = sorted(bench.root.rglob("*.md"))
    path = paths[(next(_EDITS) * 397) % len(paths)]
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(f"\nEdited at {time.time_ns()} for the one-note refresh benchmark.\n")
    return (), {}


def test_one_note_refresh(benchmark, bench):
    """Index mode (what the server's watcher runs): only the edited note is re-read."""
    service = bench.app.use_cases.service()
    reports = []
    benchmark.pedantic(lambda: reports.append(service.refresh("index")),
                       setup=lambda: _edit(bench), rounds=REFRESH_ROUNDS, iterations=1)
    for report in reports:
        index = report.stage("index")
        assert report.ok and index.outcome == "published" and index.changed == 1
        assert index.embedded <= 3
    times = sorted(benchmark.stats.stats.data)
    FIGURES.update(one_note_refresh_median_s=round(statistics.median(times), 3),
                   one_note_refresh_max_s=round(times[-1], 3))
    benchmark.extra_info.update(FIGURES)


def test_one_note_refresh_full_mode(benchmark, bench):
    """Full mode re-reads every note and rebuilds the graph; vectors come from the cache."""
    service = bench.app.use_cases.service()
    _edit(bench)
    report = benchmark.pedantic(lambda: service.refresh("full"), rounds=1, iterations=1)
    index = report.stage("index")
    assert report.ok and index.embedded <= 3 and index.reused_vectors > 0
    FIGURES.update(one_note_full_refresh_s=round(benchmark.stats.stats.max, 1),
                   **{f"one_note_full_{s.stage}_s": round(s.seconds, 1) for s in report.stages})
    benchmark.extra_info.update(FIGURES)


def queries(chunks) -> list[tuple[str, str, str | None]]:
    """(kind, query, expected memory_id or ticket) drawn with a fixed seed from the index."""
    rng = random.Random(SEED)
    notes = chunks.notes(ScopeFilter(status=StatusFilter.ANY))
    titled = rng.sample(notes, 40)
    tickets = sorted({n.ticket for n in notes if n.ticket})
    out = [("title", n.title, n.memory_id) for n in titled]
    out += [("ticket", t, t) for t in rng.sample(tickets, 30)]
    out += [("code", c, None) for c in rng.sample(CODE, 15)]
    out += [("error", e.split(":")[0] if rng.random() < 0.5 else e, None)
            for e in rng.choices(ERRORS, k=15)]
    return out[:QUERIES]


def test_search_latency(benchmark, bench):
    service = bench.app.use_cases.service()
    asked = queries(bench.app.gateways.catalogue())
    for _, query, _ in asked[:5]:  # warm the generation's caches and the model
        service.search(query)
    latencies, hits = [], {"title": 0, "ticket": 0}

    def run_all():
        for kind, query, expected in asked:
            started = time.perf_counter()
            packet = service.search(query)
            latencies.append(time.perf_counter() - started)
            top = packet.items[0] if packet.items else None
            if top and kind == "title" and top.memory_id == expected:
                hits["title"] += 1
            if top and kind == "ticket" and expected in top.path:
                hits["ticket"] += 1

    cpu = _cpu_s()
    benchmark.pedantic(run_all, rounds=1, iterations=1)
    cpu = _cpu_s() - cpu
    cuts = statistics.quantiles(latencies, n=100)
    FIGURES.update(queries=len(latencies), search_p50_ms=round(cuts[49] * 1000, 1),
                   search_p95_ms=round(cuts[94] * 1000, 1),
                   search_max_ms=round(max(latencies) * 1000, 1),
                   search_cpu_ms_per_query=round(cpu / len(latencies) * 1000, 1),
                   title_top1=f"{hits['title']}/40", ticket_top1=f"{hits['ticket']}/30",
                   load_after=_load())
    benchmark.extra_info.update(FIGURES)
    print("\nindex-build figures:", FIGURES)
