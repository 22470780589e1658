"""Ranking rules tried on ../shared/eval/locomo-dev that are not in the product.

    .venv/bin/python benchmarks/locomo_experiments.py --state-dir /tmp/locomo-int8 \
        [--only base,merge-24-12,...]

Each experiment wraps one step of RetrievalEngine for the length of a run (nothing here is
imported by the product), so a rule can be measured before anyone builds it properly. The
rows and verdicts are in docs/benchmarks.md ("Session 4"). Only general rules are tried;
nothing about individual questions is used.

- merge-CAP-LINES: items of one note whose spans touch are merged into one item of at most
  CAP lines, with items grown to at most LINES lines (the slot freed goes to the next item).
- line-vectors: every line of every chunk gets its own vector, either pooled from the
  chunk's token states ("late chunking", no extra model call) or embedded alone with the
  chunk's context; the best line's cosine to the query is added to the top 30 candidates
  (min-max scaled, times W bonus points) and/or chooses the line an item is centred on.
- windows-SIZE-STRIDE: the semantic list is scored by each chunk's best sub-window of SIZE
  lines (every STRIDE lines, each embedded with the chunk's context) instead of one vector
  per chunk; every chunk in scope is scored, the best semantic_depth kept.
- statement-query: the question word and auxiliary ("What did ...") are cut before the
  query is embedded, so it reads more like the statements in the notes.
- feedback-K-A: pseudo-relevance feedback; the query vector moves toward the mean vector
  of the top K lexical chunks (q + A * mean, renormalised) before the semantic search.
- question-line-W: a candidate whose best-matching line is itself a question loses W points
  (a line that asks the query's question is rarely its answer).
"""

from __future__ import annotations

import argparse
import re
import sys
from contextlib import contextmanager

import numpy as np
from attrs import evolve

from memory.application import retrieval
from memory.application.evaluation import summarize
from memory.domain.context import Span
from memory.domain.scope import ScopeFilter, StatusFilter
from memory.entrypoints.container import build
from memory.entrypoints.eval_command import load_queries, run_queries
from memory.entrypoints.settings import Settings
from memory.ports.chunk_store import Hit
from tune_locomo import EVAL, CachedEmbedder

Engine = retrieval.RetrievalEngine
QUESTION_WORDS = re.compile(
    r"^\s*(what|when|where|who|whom|which|why|how)( (much|many|long|often))?\b\s*"
    r"((is|are|was|were|do|does|did|has|have|had|can|could|would|will|should)\b)?\s*", re.I)
TOP = 30  # candidates a rerank rule looks at


@contextmanager
def patched(owner, name, replacement):
    original = getattr(owner, name)
    setattr(owner, name, replacement(original))
    try:
        yield
    finally:
        setattr(owner, name, original)


def merge_touching(cap: int):
    def wrap(original):
        def evidence_all(self, chosen):
            out = []
            for item in original(self, chosen):
                for i, prev in enumerate(out):
                    touching = prev.end_line + 1 == item.start_line or \
                        item.end_line + 1 == prev.start_line
                    lines = max(prev.end_line, item.end_line) - \
                        min(prev.start_line, item.start_line) + 1
                    if prev.path == item.path and touching and lines <= cap:
                        out[i] = evolve(prev, start_line=min(prev.start_line, item.start_line),
                                        end_line=max(prev.end_line, item.end_line))
                        break
                else:
                    out.append(item)
            return tuple(out)
        return evidence_all
    return wrap


def late_line_vectors(encoder, chunks) -> dict[str, np.ndarray]:
    """Per line of each chunk: the mean of the chunk's contextual token states on that line."""
    session, tokenizer = encoder._session, encoder._tokenizer
    inputs = {i.name for i in session.get_inputs()}
    vectors = {}
    for c in chunks:
        enc = tokenizer.encode(c.indexed_text)
        ids = np.array([enc.ids], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": np.array([enc.attention_mask], dtype=np.int64),
                "token_type_ids": np.zeros_like(ids)}
        hidden = session.run(None, {k: v for k, v in feed.items() if k in inputs})[0][0]
        position, rows = (len(c.context) + 1 if c.context else 0), []
        for line in c.text.split("\n"):
            tokens = [i for i, (s, e) in enumerate(enc.offsets)
                      if e > s and position <= s < position + len(line)]
            v = hidden[tokens].mean(0) if tokens else np.zeros(hidden.shape[1], np.float32)
            rows.append(v / (np.linalg.norm(v) or 1.0))
            position += len(line) + 1
        vectors[c.chunk_id] = np.stack(rows)
    return vectors


def window_vectors(embedder, chunks, size: int, stride: int) -> dict[str, np.ndarray]:
    """Per chunk: a vector for each window of `size` lines, every `stride` lines."""
    keys, texts = [], []
    for c in chunks:
        lines = c.text.split("\n")
        starts = list(range(0, max(1, len(lines) - size + 1), stride))
        if starts[-1] + size < len(lines):
            starts.append(len(lines) - size)
        for s in starts:
            body = "\n".join(lines[s:s + size])
            keys.append(c.chunk_id)
            texts.append(f"{c.context}\n{body}" if c.context else body)
    vectors: dict[str, list] = {}
    for key, v in zip(keys, embedder.embed_documents(texts)):
        vectors.setdefault(key, []).append(v)
    return {k: np.stack(v) for k, v in vectors.items()}


def best_window(store, vectors):
    def wrap(original):
        def semantic(self, embedded, scope, warnings):
            vector, _ = embedded
            if vector is None:
                return original(self, embedded, scope, warnings)
            query = np.asarray(vector)
            hits = [Hit(c, n, float((vectors[c.chunk_id] @ query).max()))
                    for n in store.notes(scope) for c in store.chunks_of(n.memory_id)]
            return sorted(hits, key=lambda h: -h.score)[: self.config.semantic_depth]
        return semantic
    return wrap


class LineVectors:
    """Rerank bonus and item focus from the best line's cosine to the query."""

    def __init__(self, vectors, query_vector, weight: float, focus: bool):
        self.vectors, self.query_vector = vectors, query_vector
        self.weight, self.focus = weight, focus

    def best(self, chunk) -> np.ndarray:
        return self.vectors[chunk.chunk_id] @ self.query_vector()

    def rerank(self, original):
        def rerank(cands, features, tickets=(), today=None, policy=None, leader=1.0):
            out = original(cands, features, tickets, today, policy, leader)
            if not self.weight:
                return out
            head = out[:TOP]
            sims = [float(self.best(c.chunk).max()) for c in head]
            low, span = min(sims, default=0.0), (max(sims, default=0.0) - min(sims, default=0.0)) or 1.0
            head = sorted((c.with_bonus(self.weight * leader * (s - low) / span, "line-vector")
                           for c, s in zip(head, sims)), key=lambda c: -c.score)
            return head + list(out[TOP:])
        return rerank

    def focus_on(self, original):
        def focus(engine, c, blocked):
            if not self.focus:
                return original(engine, c, blocked)
            taken = {i for b in blocked for i in range(b.start_line, b.end_line + 1)}
            free = [n for n in range(c.chunk.start_line, c.chunk.end_line + 1) if n not in taken]
            if not free:
                return None
            lines, sims = c.chunk.text.split("\n"), self.best(c.chunk)
            at = max(free, key=lambda n: len(engine._features.matched_terms(
                lines[n - c.chunk.start_line])) + sims[n - c.chunk.start_line])
            return Span(start_line=at, end_line=at)
        return focus


def statement_query(original):
    def query_vector(self, query):
        return original(self, QUESTION_WORDS.sub("", query).rstrip("?").strip() or query)
    return query_vector


class Feedback:
    """Rocchio feedback from the first lexical list a search makes to its semantic query."""

    def __init__(self, embedder, top: int, weight: float):
        self.embedder, self.top, self.weight = embedder, top, weight
        self.lexical: list = []
        self.vectors: dict[str, np.ndarray] = {}

    def trace(self, original):
        def trace(engine, request):
            self.lexical = []
            return original(engine, request)
        return trace

    def search(self, original):
        def search(store, query, scope, limit):
            found = original(store, query, scope, limit)
            if not self.lexical:
                self.lexical = found
            return found
        return search

    def semantic(self, original):
        def semantic(engine, embedded, scope, warnings):
            vector, why = embedded
            if vector is None or not self.lexical:
                return original(engine, embedded, scope, warnings)
            query = np.asarray(vector) + self.weight * np.mean(
                [self.vector(h.chunk) for h in self.lexical[:self.top]], axis=0)
            return original(engine, (query / np.linalg.norm(query), why), scope, warnings)
        return semantic

    def vector(self, chunk) -> np.ndarray:
        if chunk.chunk_id not in self.vectors:
            self.vectors[chunk.chunk_id] = self.embedder.embed_documents([chunk.indexed_text])[0]
        return self.vectors[chunk.chunk_id]


def question_line_penalty(weight: float):
    def wrap(original):
        def rerank(cands, features, tickets=(), today=None, policy=None, leader=1.0):
            out = original(cands, features, tickets, today, policy, leader)
            head = []
            for c in out[:TOP]:
                best = max(c.chunk.text.split("\n"), key=lambda l: len(features.matched_terms(l)))
                head.append(c.with_bonus(-weight * leader, "question-line")
                            if best.rstrip().endswith("?") else c)
            return sorted(head, key=lambda c: -c.score) + list(out[TOP:])
        return rerank
    return wrap


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--state-dir", required=True)
    p.add_argument("--only", help="comma-separated experiment names")
    args = p.parse_args()
    app = build(Settings.resolve(str(EVAL / "memory"), args.state_dir, watch=False))
    embedder = CachedEmbedder(app.gateways.embedder())
    embedder.warm()
    embedder.wait_ready(300)
    app.gateways.embedder.override(embedder)
    service = app.use_cases.service()
    store = app.gateways.chunks()
    queries = load_queries(str(EVAL / "queries.jsonl"))
    base = service.engine.config
    current: dict = {}

    def remember_query(original):
        def trace(self, request):
            current["vector"] = np.asarray(embedder.embed_query(request.query))
            return original(self, request)
        return trace

    chunks = [c for n in store.notes(ScopeFilter(status=StatusFilter.ANY))
              for c in store.chunks_of(n.memory_id)]
    lazy: dict = {}

    def line_vectors(kind):
        if kind not in lazy:
            lazy[kind] = late_line_vectors(embedder.inner._encoder, chunks) if kind == "late" \
                else window_vectors(embedder.inner, chunks, 1, 1)
        return lazy[kind]

    def with_lines(kind, weight, focus):
        def run():
            lines = LineVectors(line_vectors(kind), lambda: current["vector"], weight, focus)
            with patched(Engine, "trace", remember_query), \
                    patched(retrieval, "rerank", lines.rerank), \
                    patched(Engine, "_focus", lines.focus_on):
                return measure()
        return run

    def measure(config=base):
        service.engine.config = config
        s = summarize(queries, run_queries(service, store, queries, limit=10), [5, 10])
        return s["groups"]["all"]

    def under(owner, name, wrap, config=base):
        def run():
            with patched(owner, name, wrap):
                return measure(config)
        return run

    experiments = {"base": measure}
    for cap, lines in ((24, 12), (24, 11), (22, 10), (18, 9)):
        experiments[f"merge-{cap}-{lines}"] = under(
            Engine, "_evidence_all", merge_touching(cap), evolve(base, max_item_lines=lines))
    for kind in ("late", "alone"):
        for weight in (0.25, 0.5, 1.0):
            experiments[f"{kind}-lines-w{weight}"] = with_lines(kind, weight, False)
        experiments[f"{kind}-lines-focus"] = with_lines(kind, 0.0, True)
    semantic_only = evolve(base, use_lexical=False, use_graph=False)
    for size, stride in ((8, 8), (4, 2), (3, 1), (3, 3), (2, 1)):
        def windows(size=size, stride=stride, config=base):
            key = f"windows-{size}-{stride}"
            if key not in lazy:
                lazy[key] = window_vectors(embedder.inner, chunks, size, stride)
            return under(Engine, "_semantic", best_window(store, lazy[key]), config)()
        experiments[f"windows-{size}-{stride}"] = windows
        experiments[f"windows-{size}-{stride}-semantic-only"] = \
            lambda size=size, stride=stride, w=windows: w(size, stride, semantic_only)
    experiments["semantic-only"] = lambda: measure(semantic_only)
    for top, weight in ((1, 0.3), (1, 0.6), (3, 0.3), (3, 1.0)):
        def feedback(top=top, weight=weight):
            rule = Feedback(embedder.inner, top, weight)
            with patched(Engine, "trace", rule.trace), \
                    patched(type(store), "search", rule.search), \
                    patched(Engine, "_semantic", rule.semantic):
                return measure()
        experiments[f"feedback-{top}-{weight}"] = feedback
    experiments["statement-query"] = under(Engine, "_query_vector", statement_query)
    for weight in (0.1, 0.2, 0.4):
        experiments[f"question-line-{weight}"] = under(retrieval, "rerank",
                                                       question_line_penalty(weight))
    only = set(args.only.split(",")) if args.only else None
    print("| experiment | R@5 | MRR@10 | EH@5 | L@5 |\n|---|---|---|---|---|")
    for name, run in experiments.items():
        if only and name not in only:
            continue
        s = run()
        print(f"| {name} | {s['R@5']:.3f} | {s['MRR@10']:.3f} | {s['EH@5']:.3f} "
              f"| {s['L@5']:.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
