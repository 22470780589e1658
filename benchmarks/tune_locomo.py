"""Sweep search settings on ../shared/eval/locomo-dev, in process, and print one row each.

    .venv/bin/python benchmarks/tune_locomo.py --state-dir /tmp/locomo-state [--window 8 --overlap 2]

Query vectors are computed once and reused across variants, so a sweep costs seconds per
variant. Only general settings are varied; nothing about individual questions is used.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from attrs import evolve

from memory.application.evaluation import summarize
from memory.application.retrieval import SearchConfig
from memory.entrypoints.container import build
from memory.entrypoints.eval_command import load_queries, run_queries
from memory.entrypoints.settings import Settings

EVAL = Path(__file__).resolve().parents[2] / "shared" / "eval" / "locomo-dev"


class CachedEmbedder:
    """Wraps the real embedder and remembers query vectors between variants."""

    def __init__(self, inner):
        self.inner, self.cache = inner, {}

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def embed_query(self, text):
        if text not in self.cache:
            self.cache[text] = self.inner.embed_query(text)
        return self.cache[text]


def variants(base: SearchConfig):
    yield "default", base
    for name, change in [
        ("lexical-only", dict(use_semantic=False, use_graph=False)),
        ("semantic-only", dict(use_lexical=False, use_graph=False)),
        ("no-graph", dict(use_graph=False)),
        ("per-note-10", dict(per_note=10)),
        ("best-first", dict(diversify=False)),
        ("best-first-k20", dict(diversify=False, rrf_k=20)),
        ("sem0.3", dict(weights={"lexical": 1.0, "semantic": 0.3, "graph": 0.3})),
        ("graph0.1", dict(weights={"lexical": 1.0, "semantic": 0.5, "graph": 0.1})),
        ("rrf", dict(fusion="rrf", weights={"lexical": 1.0, "semantic": 0.25, "graph": 0.3})),
        ("k20", dict(fusion="rrf", rrf_k=20,
                     weights={"lexical": 1.0, "semantic": 0.25, "graph": 0.3})),
        ("diversify", dict(diversify=True)),
        ("no-focus", dict(focus=False)),
        ("items-8-lines", dict(max_item_lines=8)),
        *[(f"span-{focus}-{lines}-{budget}", dict(diversify=False, rrf_k=10, focus=focus,
            max_item_lines=lines, budget_chars=budget,
            weights={"lexical": 1.0, "semantic": 0.15, "graph": 0.3}))
          for focus in (False, True) for lines in (8, 10, 12) for budget in (8000, 16000, 30000)],
        *[(f"bf-k{k}-s{w}", dict(diversify=False, rrf_k=k, fusion="rrf",
                                  weights={"lexical": 1.0, "semantic": w, "graph": 0.3}))
          for k in (5, 10, 20, 40) for w in (0.15, 0.25, 0.35, 0.5)],
        *[(f"sf-s{w}", dict(fusion="score",
                            weights={"lexical": 1.0, "semantic": w, "graph": 0.1}))
          for w in (0.3, 0.5, 0.7, 1.0)],
        *[(f"rrf-s{w}", dict(fusion="rrf", weights={"lexical": 1.0, "semantic": w, "graph": 0.3}))
          for w in (0.5, 0.75, 1.0)],
    ]:
        yield name, evolve(base, **change)


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--state-dir", required=True)
    p.add_argument("--only", help="comma-separated variant names")
    p.add_argument("--window", type=int, help="chunk window in lines (rebuilds the index)")
    p.add_argument("--overlap", type=int, default=2)
    args = p.parse_args()
    app = build(Settings.resolve(str(EVAL / "memory"), args.state_dir))
    if args.window:
        from memory.adapters.markdown import MarkdownNoteSource
        app.gateways.source.override(MarkdownNoteSource(EVAL / "memory", window=args.window,
                                                        overlap=args.overlap))
        print(app.use_cases.service().refresh("index").as_dict()["stages"][0]["outcome"],
              file=sys.stderr)
    embedder = CachedEmbedder(app.gateways.embedder())
    embedder.warm()
    embedder.wait_ready(300)
    app.gateways.embedder.override(embedder)
    service = app.use_cases.service()
    queries = load_queries(str(EVAL / "queries.jsonl"))
    chunks = app.gateways.chunks()
    only = set(args.only.split(",")) if args.only else None
    print("| variant | R@5 | MRR@10 | EH@5 | L@5 | p50 ms |\n|---|---|---|---|---|---|")
    for name, config in variants(service.engine.config):
        if only and name not in only:
            continue
        service.engine.config = config
        started = time.perf_counter()
        results = run_queries(service, chunks, queries, limit=10)
        s = summarize(queries, results, [1, 3, 5, 10])["groups"]["all"]
        lat = sorted(r["latency_ms"] for r in results.values())[len(results) // 2]
        print(f"| {name} | {s['R@5']:.3f} | {s['MRR@10']:.3f} | {s['EH@5']:.3f} | {s['L@5']:.1f} "
              f"| {lat:.1f} |", flush=True)
        print(f"  ({time.perf_counter() - started:.0f}s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
