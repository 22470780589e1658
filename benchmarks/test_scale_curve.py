"""The scale curve on generate_root vaults: full build, one-note refresh, search, serving RSS.

    AI_MEMORY_BENCH_SIZES=1000 .venv/bin/python -m pytest benchmarks/test_scale_curve.py -s  # quick
    .venv/bin/python -m pytest benchmarks/test_scale_curve.py -s \
        --benchmark-json=/tmp/scale.json                     # 1k, 5k, 10k: cold builds, slow

Each size is built cold once per run (fresh state, empty embedding cache, model loaded
beforehand; the one-time ONNX export is shared), on the production container. With
AI_MEMORY_BENCH_REUSE=1 a state left by an earlier run is reused with its recorded cold
build. generate_root is not prefix-stable across sizes (its sampling depends on the note
count), so no embedding cache can be carried from a smaller size to a bigger one.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bench_corpora import (BENCH_DIR, BENCHMARKS, cpu_seconds, env_ints, generated_queries,
                           generated_root, latencies_of, profiled, real_app, ready_app, stamp,
                           timed_pass)
from memory.entrypoints.eval_command import run_queries

SIZES = env_ints("AI_MEMORY_BENCH_SIZES", "1000,5000,10000")
REUSE = os.environ.get("AI_MEMORY_BENCH_REUSE") == "1"
SEARCHES = 200
REFRESH_ROUNDS = 5


def _stage_seconds(report) -> dict:
    return {f"{s.stage}_s": round(s.seconds, 2) for s in report.stages}


def _cold_build(notes: int, state: Path):
    root = generated_root(notes, fresh=True)  # undo edits of earlier one-note refreshes
    if state.exists():
        shutil.rmtree(state)
    app = real_app(root, state)
    embedder = app.gateways.embedder()
    started = time.perf_counter()
    assert embedder.wait_ready(300), f"embedding model not ready: {embedder.state()}"
    load_s = time.perf_counter() - started
    started, cpu = time.perf_counter(), cpu_seconds()
    with profiled(f"full-build-{notes}"):  # not under pytest-benchmark: profiling is safe
        report = app.use_cases.service().refresh("full")
    seconds, cpu = time.perf_counter() - started, cpu_seconds() - cpu
    assert report.ok, report.as_dict()
    info = app.gateways.index().current()
    index = report.stage("index")
    return root, app, {"notes": info.notes, "chunks": info.chunks, "seconds": round(seconds, 1),
                 "chunks_per_s": round(info.chunks / seconds, 1), "cpu_s": round(cpu, 1),
                 "chunks_per_cpu_s": round(info.chunks / cpu, 1), "embedded": index.embedded,
                 "model_load_s": round(load_s, 2), **_stage_seconds(report), **stamp()}


@pytest.fixture(scope="module", params=SIZES, ids=lambda n: f"{n}-notes")
def scale(request):
    notes = request.param
    state = BENCH_DIR / f"gen-{notes}-state"
    record = state / "bench-cold-build.json"
    if REUSE and record.exists():
        root = generated_root(notes)
        cold = json.loads(record.read_text())
        app = ready_app(root, state)
    else:
        root, app, cold = _cold_build(notes, state)
        record.write_text(json.dumps(cold))
    return {"notes": notes, "root": root, "state": state, "app": app, "cold": cold}


def test_full_build(benchmark, scale):
    """extra_info: the cold build. Timed here: a full rebuild whose vectors are all cached,
    i.e. everything a build does except running the model."""
    service = scale["app"].use_cases.service()
    reports = []
    cpu = cpu_seconds()
    benchmark.pedantic(lambda: reports.append(service.refresh("full")), rounds=1, iterations=1)
    cpu = cpu_seconds() - cpu
    warm = reports[0]
    chunks = scale["cold"]["chunks"]
    seconds = latencies_of(benchmark)[0] / 1000
    info = {"cold": scale["cold"], "warm_cache_seconds": round(seconds, 1),
            "warm_cache_chunks_per_s": round(chunks / seconds, 1),
            "warm_cache_cpu_s": round(cpu, 1),
            "warm_cache_embedded": warm.stage("index").embedded, **_stage_seconds(warm),
            **stamp()}
    benchmark.extra_info.update(info)
    print(f"\n{benchmark.name}: {json.dumps(info)}")
    with profiled(f"warm-full-build-{scale['notes']}") as on:
        if on:
            service.refresh("full")


def _touch(root: Path, notes: list[Path]):
    """Setup for one round: append a line to the next note, as an agent saving a fact."""
    pending = iter(notes)

    def setup():
        path = next(pending)
        with path.open("a", encoding="utf-8") as f:
            f.write(f"\nBenchmark edit at {time.time_ns()}: the retry budget is now 5.\n")
        return (), {}
    return setup


def test_one_note_refresh(benchmark, scale):
    service = scale["app"].use_cases.service()
    files = sorted(scale["root"].rglob("*.md"))
    picked = [files[(i * 7919) % len(files)] for i in range(1, REFRESH_ROUNDS + 1)]
    reports, cpu = [], []

    def refresh():
        started = cpu_seconds()
        reports.append(service.refresh("index"))
        cpu.append(cpu_seconds() - started)

    benchmark.pedantic(refresh, setup=_touch(scale["root"], picked), rounds=REFRESH_ROUNDS,
                       iterations=1)
    seconds = sorted(latencies_of(benchmark))
    index = [r.stage("index") for r in reports]
    assert all(s.outcome == "published" and s.changed == 1 for s in index), \
        [s.as_dict() for s in index]
    info = {"median_s": round(seconds[len(seconds) // 2] / 1000, 3),
            "max_s": round(seconds[-1] / 1000, 3),
            "cpu_median_s": round(sorted(cpu)[len(cpu) // 2], 3),
            "embedded": [s.embedded for s in index],
            **stamp()}
    benchmark.extra_info.update(info)
    print(f"\n{benchmark.name}: {json.dumps(info)}")
    with profiled(f"one-note-refresh-{scale['notes']}") as on:
        if on:
            _touch(scale["root"], [files[0]])()
            service.refresh("index")


def test_search_latency(benchmark, scale):
    """All signals on, in process, through MemoryService (query embedding included)."""
    app = scale["app"]
    service, chunks, queries = app.use_cases.service(), app.gateways.catalogue(), \
        generated_queries(SEARCHES)
    summary = timed_pass(benchmark, service, chunks, queries)
    info = {key: round(summary[key], 2) for key in ("p50_ms", "p95_ms", "cpu_p50_ms",
                                                     "cpu_p95_ms")}
    info.update(notes=scale["notes"], chunks=scale["cold"]["chunks"], queries=len(queries),
                **stamp())
    benchmark.extra_info.update(info)
    print(f"\n{benchmark.name}: {json.dumps(info)}")
    with profiled(f"search-{scale['notes']}") as on:
        if on:
            run_queries(service, chunks, queries, limit=10)


def test_serving_peak_rss(benchmark, scale):
    """A separate process opens the built state, loads the model and serves searches."""
    command = [sys.executable, str(BENCHMARKS / "search_rss.py"), "--root", str(scale["root"]),
               "--state-dir", str(scale["state"]), "--queries", str(SEARCHES)]
    outputs = []
    benchmark.pedantic(lambda: outputs.append(subprocess.run(
        command, capture_output=True, text=True, check=True, timeout=900)),
        rounds=1, iterations=1)
    info = json.loads(outputs[0].stdout.strip().splitlines()[-1])
    info.update(notes=scale["notes"], **stamp())
    benchmark.extra_info.update(info)
    print(f"\n{benchmark.name}: {json.dumps(info)}")
