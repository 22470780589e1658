"""Sweep search settings on ../shared/eval/locomo-dev, in process, and print one row each.

    .venv/bin/python benchmarks/tune_locomo.py --state-dir /tmp/locomo-state [--window 8 --overlap 2]
    .venv/bin/python benchmarks/tune_locomo.py --root /tmp/root --state-dir /tmp/state --folds \
        --only default,order-5-1-0.5,spread-many-0.1
    .venv/bin/python benchmarks/tune_locomo.py --corpus frozen --state-dir /tmp/frozen-state \
        --only default --results /tmp/frozen-results

`--corpus frozen` runs the frozen benchmark (benchmarks/fixtures: the vault is copied into the
state folder and indexed on first use, the clock pinned as in its test); `--corpus
engineering` the engineering notes of benchmarks/fixtures/engineering the same way; `--corpus
own --vault DIR --cases FILE` a root and questions of your own (notes you may not commit). `--results DIR`
writes every packet of each variant to DIR/VARIANT.jsonl; `--compare DIR` counts the queries
whose packet differs from the one in DIR/VARIANT.jsonl (another commit's run); the whole
packet is compared (items with scores, reasons and spans, no_answer, warnings, scope).
`--folds` adds leave-one-conversation-out tables (frozen: five round-robin folds): every
variant against the first run (a `--baseline NAME=FILE` of another commit, else the first
variant named), fold by fold, and the variant the other folds would choose for each fold.
`--only` keeps the order given. `--root` searches a copy of the locomo root (the one the
state was refreshed from).

Query vectors are computed once and reused across variants, so a sweep costs seconds per
variant. Only general settings are varied; nothing about individual questions is used.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from collections import Counter
from pathlib import Path

from attrs import evolve, frozen

from memory.application.evaluation import summarize
from memory.application.search.config import SearchConfig
from memory.domain.item_order import LineOrder
from memory.domain.outcome_sections import OutcomeSections
from question_shapes import asks_for_many
from memory.domain.selection import SelectConfig
from memory.entrypoints.container import build
from memory.entrypoints.converter import to_json
from memory.entrypoints.eval_command import load_queries, load_results, run_queries
from memory.entrypoints.settings import Settings
import fold_report

EVAL = Path(__file__).resolve().parents[2] / "shared" / "eval" / "locomo-dev"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
FROZEN_AT = "2026-11-30T12:00:00Z"  # tests/integration/test_frozen_benchmark.py
ENGINEERING = Path(__file__).resolve().parent / "fixtures" / "engineering"
CORPORA = {"frozen": (FIXTURES / "vault", FIXTURES / "cases.jsonl"),
           "engineering": (ENGINEERING / "memory", ENGINEERING / "queries.jsonl")}


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


@frozen(kw_only=True)
class SpreadSelect:
    """The select step for list questions (session 7, not in the product): each item a
    note already holds lowers its next candidate by `penalty` times the best score."""

    inner: SelectConfig
    penalty: float
    always: bool = False  # False: only questions that asks_for_many

    def select(self, ranked, limit, query=None):
        if not (self.always or (query is not None and asks_for_many(query.text))):
            return self.inner.select(ranked, limit, query)
        left = self.inner.drop_noise(ranked)
        unit = self.penalty * max([abs(c.score) for c in left] or [1.0])
        chosen, held = [], Counter()
        while left and len(chosen) < limit:
            best = max(left, key=lambda c: c.score - unit * held[c.note.memory_id])
            left.remove(best)
            if not any(x.chunk.path == best.chunk.path and x.chunk.start_line <= best.chunk.end_line
                       and best.chunk.start_line <= x.chunk.end_line for x in chosen):
                chosen.append(best)
                held[best.note.memory_id] += 1
        return tuple(chosen)


def tuned(base: SearchConfig, focus: bool = True, **steps: dict) -> SearchConfig:
    """`base` with some steps' settings changed: tuned(base, fusion=dict(rrf_k=20))."""
    config = evolve(base, **{name: evolve(getattr(base, name), **changes)
                             for name, changes in steps.items()})
    return config if focus else evolve(config, focus=None)


def ablations(base: SearchConfig):
    """The defaults with one ranking rule switched off (or one weight moved): each must
    gain over its ablation in most folds to stay (docs/benchmarks.md, session 6)."""
    fusion, rerank = base.fusion, base.rerank
    for bonus in ("identifier", "path", "phrase", "ticket", "superseded", "archived",
                  "needs_review", "past_review"):
        if getattr(rerank, bonus, None):
            yield f"no-{bonus}", tuned(base, rerank={bonus: 0.0})
    yield "no-hop", evolve(base, hop=None)
    yield "no-outcome", evolve(base, outcome=None)
    yield "no-rescue", tuned(base, fusion=dict(weak_lexical_coverage=0.0))
    yield "no-graph", tuned(base, gather=dict(use_graph=False))
    yield "no-noise-drop", tuned(base, select=dict(min_item_similarity=-1.0))
    yield "no-focus", tuned(base, focus=False)
    for signal, values in (("semantic", (0.3, 0.7)), ("graph", (0.0, 0.3))):
        for w in values:
            yield f"{signal}-{w}", tuned(base, fusion=dict(
                weights={**fusion.weights, signal: w}))


def candidates(base: SearchConfig):
    """Rules measured before they become defaults (docs/benchmarks.md, session 6)."""
    # Session 8: the outcome step over the first 1, 3 or 5 notes.
    for top in (1, 3, 5):
        yield f"outcome-{top}", evolve(base, outcome=OutcomeSections(top=top))
    for w in (0.0, 0.5, 1.0):
        yield f"in-period-{w}", tuned(base, rerank=dict(in_period=w))
    # Session 7: list questions spread over notes (MMR over notes), with and without the
    # question-shape detector; a penalty of 10 is "one item per note first". Not taken.
    for when in ("many", "always"):
        for w in (0.1, 0.2, 0.3, 0.5, 1.0, 10.0):
            yield f"spread-{when}-{w}", evolve(base, select=SpreadSelect(
                inner=base.select, penalty=w, always=when == "always"))
    # Session 7: the first items ordered by their best line's rarity-weighted match.
    for top in (5, 10):
        for window in (1, 2, 3):
            for w in (0.25, 0.5, 1.0, 2.0, 4.0):
                yield f"order-{top}-{window}-{w}", evolve(
                    base, order=LineOrder(weight=w, top=top, window=window))


def variants(base: SearchConfig):
    yield "default", base
    yield from ablations(base)
    yield from candidates(base)
    rrf = {"lexical": 1.0, "semantic": 0.25, "graph": 0.3}
    for name, config in [
        ("lexical-only", tuned(base, gather=dict(use_semantic=False, use_graph=False))),
        ("semantic-only", tuned(base, gather=dict(use_lexical=False, use_graph=False))),
        ("best-first", tuned(base, select=dict(diversify=False))),
        ("best-first-k20", tuned(base, select=dict(diversify=False), fusion=dict(rrf_k=20))),
        ("sem0.3", tuned(base, fusion=dict(weights={"lexical": 1.0, "semantic": 0.3,
                                                    "graph": 0.3}))),
        ("graph0.1", tuned(base, fusion=dict(weights={"lexical": 1.0, "semantic": 0.5,
                                                      "graph": 0.1}))),
        ("rrf", tuned(base, fusion=dict(method="rrf", weights=rrf))),
        ("k20", tuned(base, fusion=dict(method="rrf", rrf_k=20, weights=rrf))),
        ("diversify", tuned(base, select=dict(diversify=True))),
        ("items-8-lines", tuned(base, context=dict(max_item_lines=8))),
        *[(f"span-{focus}-{lines}-{budget}", tuned(
            base, focus, select=dict(diversify=False),
            fusion=dict(rrf_k=10, weights={"lexical": 1.0, "semantic": 0.15, "graph": 0.3}),
            context=dict(max_item_lines=lines, budget_chars=budget)))
          for focus in (False, True) for lines in (8, 10, 12) for budget in (8000, 16000, 30000)],
        *[(f"bf-k{k}-s{w}", tuned(base, select=dict(diversify=False), fusion=dict(
            rrf_k=k, method="rrf", weights={"lexical": 1.0, "semantic": w, "graph": 0.3})))
          for k in (5, 10, 20, 40) for w in (0.15, 0.25, 0.35, 0.5)],
        *[(f"sf-s{w}", tuned(base, fusion=dict(
            method="score", weights={"lexical": 1.0, "semantic": w, "graph": 0.1})))
          for w in (0.3, 0.5, 0.7, 1.0)],
        *[(f"rrf-s{w}", tuned(base, fusion=dict(
            method="rrf", weights={"lexical": 1.0, "semantic": w, "graph": 0.3})))
          for w in (0.5, 0.75, 1.0)],
    ]:
        yield name, config


class Recorder:
    """A service whose search also keeps every packet, in call order."""

    def __init__(self, service):
        self.service, self.packets = service, []

    def search(self, query, **filters):
        packet = self.service.search(query, **filters)
        self.packets.append(packet)
        return packet


def fixture_app(state_dir: str, corpus: str):
    """A fixture root (the frozen vault, or the engineering notes) copied beside its state
    and indexed once; the clock pinned as in the frozen test."""
    from dependency_injector import providers

    from memory.adapters.inmemory.state import FixedClock
    source, queries = CORPORA[corpus]
    root = Path(state_dir) / "vault"
    if not root.exists():
        shutil.copytree(source, root)
    app = build(Settings.resolve(str(root), state_dir=str(root / ".ai-memory"), watch=False))
    app.gateways.clock.override(providers.Object(FixedClock(FROZEN_AT)))
    if app.gateways.index().current() is None:
        app.use_cases.service().refresh("full")
    return app, queries


def write_results(folder: str, name: str, queries, packets) -> None:
    Path(folder).mkdir(parents=True, exist_ok=True)
    with open(Path(folder) / f"{name}.jsonl", "w", encoding="utf-8") as out:
        for query, packet in zip(queries, packets, strict=True):
            out.write(json.dumps({"qid": query["qid"], "packet": to_json(packet)}) + "\n")


def differing(folder: str, name: str, queries, packets) -> list[str]:
    """qids whose packet differs from the one recorded in folder/name.jsonl."""
    with open(Path(folder) / f"{name}.jsonl", encoding="utf-8") as f:
        recorded = {row["qid"]: row["packet"] for row in map(json.loads, f)}
    # Through JSON, as recorded: tuples become lists, floats keep their repr.
    return [q["qid"] for q, packet in zip(queries, packets, strict=True)
            if json.loads(json.dumps(to_json(packet))) != recorded.get(q["qid"])]


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--state-dir", required=True)
    p.add_argument("--corpus", choices=("locomo", "frozen", "engineering", "own"),
                   default="locomo")
    p.add_argument("--vault", help="with --corpus own: a memory root of your own")
    p.add_argument("--cases", help="with --corpus own: its questions (queries.jsonl format)")
    p.add_argument("--only", help="comma-separated variant names")
    p.add_argument("--results", help="folder for each variant's packets (VARIANT.jsonl)")
    p.add_argument("--compare", help="folder of another run's --results to compare with")
    p.add_argument("--folds", action="store_true",
                   help="also print leave-one-conversation-out tables (fold_report.py)")
    p.add_argument("--baseline", action="append", default=[], metavar="NAME=FILE",
                   help="a run of another commit (score.py results, e.g. DIR/default.results"
                        ".jsonl of its --results) to list first in the fold tables")
    p.add_argument("--root", default=str(EVAL / "memory"),
                   help="the locomo memory root (a copy of it, e.g. /tmp/root)")
    p.add_argument("--window", type=int, help="chunk window in lines (rebuilds the index)")
    p.add_argument("--overlap", type=int, default=2)
    args = p.parse_args()
    if args.corpus == "own":
        if not (args.vault and args.cases):
            p.error("--corpus own needs --vault DIR and --cases FILE")
        CORPORA["own"] = (Path(args.vault), Path(args.cases))
    if args.corpus != "locomo":
        app, query_file = fixture_app(args.state_dir, args.corpus)
    else:
        app = build(Settings.resolve(args.root, args.state_dir))
        query_file = EVAL / "queries.jsonl"
    if args.window:
        from memory.adapters.markdown import MarkdownNoteSource
        app.gateways.source.override(MarkdownNoteSource(Path(args.root), window=args.window,
                                                        overlap=args.overlap))
        print(app.use_cases.service().refresh("index").stage("index").outcome,
              file=sys.stderr)
    embedder = CachedEmbedder(app.gateways.embedder())
    embedder.warm()
    embedder.wait_ready(300)
    app.gateways.embedder.override(embedder)
    service = app.use_cases.service()
    queries = load_queries(str(query_file))
    chunks = app.gateways.catalogue()
    # The vector matrix loads on a thread of its own after the first search; sqlite-vec
    # answers meanwhile with cosines that differ in the 7th digit. Measure the matrix only.
    service.search(queries[0]["question"])
    time.sleep(2)
    only = args.only.split(",") if args.only else None
    runs = {name: load_results(path) for name, path in
            (b.split("=", 1) for b in args.baseline)}
    print("| variant | R@5 | MRR@10 | EH@5 | L@5 | no-answer | p50 ms |\n"
          "|---|---|---|---|---|---|---|")
    found = dict(variants(service.engine.config))
    for name in only or found:
        config = found[name]
        started = time.perf_counter()
        recorder = Recorder(service.with_search_config(config))
        results = run_queries(recorder, chunks, queries, limit=10)
        runs[name] = results
        if args.results:
            write_results(args.results, name, queries, recorder.packets)
            Path(args.results, f"{name}.results.jsonl").write_text(
                "".join(json.dumps(r) + "\n" for r in results.values()), encoding="utf-8")
        if args.compare:
            changed = differing(args.compare, name, queries, recorder.packets)
            print(f"  {name}: {len(changed)} of {len(queries)} packets differ from "
                  f"{args.compare} {changed[:10]}", file=sys.stderr)
        summary = summarize(queries, results, [1, 3, 5, 10])
        s, refused = summary["groups"]["all"], summary["no_answer"]
        na = f"{refused['accuracy']:.3f}" if refused["n"] else "n/a"
        lat = sorted(r["latency_ms"] for r in results.values())[len(results) // 2]
        print(f"| {name} | {s['R@5']:.3f} | {s['MRR@10']:.3f} | {s['EH@5']:.3f} | {s['L@5']:.1f} "
              f"| {na} | {lat:.1f} |", flush=True)
        print(f"  ({time.perf_counter() - started:.0f}s)", file=sys.stderr)
    if args.folds:
        key = "project" if args.corpus == "locomo" else "fold"
        print("\n" + fold_report.render(queries, runs, key))
        print("\n" + fold_report.by_category(queries, runs, key))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
