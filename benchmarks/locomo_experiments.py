"""Ranking rules tried on ../shared/eval/locomo-dev that are not in the product.

    .venv/bin/python benchmarks/locomo_experiments.py --state-dir /tmp/locomo-int8 \
        [--only base,merge-24-12,...]

Each experiment replaces one search step in the SearchConfig (a value with the step's
method) or one port (a wrapper over the real adapter, wired by overriding the container),
so a rule can be measured before anyone builds it properly; nothing here is imported by the
product. The rows and verdicts are in docs/benchmarks.md ("Session 4"). Only general rules
are tried; nothing about individual questions is used.

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

import numpy as np
from attrs import evolve, frozen
from dependency_injector import providers

from memory.application.evaluation import summarize
from memory.application.search.config import SearchConfig
from memory.domain.candidates import Hit
from memory.domain.citing import ContextConfig
from memory.domain.context import Span
from memory.domain.ranking import RerankPolicy
from memory.domain.scope import ScopeFilter, StatusFilter
from memory.entrypoints.container import build
from memory.entrypoints.eval_command import load_queries, run_queries
from memory.entrypoints.settings import Settings
from tune_locomo import EVAL, CachedEmbedder

QUESTION_WORDS = re.compile(
    r"^\s*(what|when|where|who|whom|which|why|how)( (much|many|long|often))?\b\s*"
    r"((is|are|was|were|do|does|did|has|have|had|can|could|would|will|should)\b)?\s*", re.I)
TOP = 30  # candidates a rerank rule looks at


@frozen(kw_only=True)
class MergeTouching:
    """The expand step, then items of one note whose spans touch merge up to `cap` lines."""

    inner: ContextConfig
    cap: int

    @property
    def budget_chars(self) -> int:
        return self.inner.budget_chars

    def cited(self, chosen, texts, query, focus):
        """ContextConfig.cited's (candidate, item) pairs, touching items of a note merged."""
        out = []
        for candidate, item in self.inner.cited(chosen, texts, query, focus):
            for i, (first, prev) in enumerate(out):
                touching = prev.end_line + 1 == item.start_line or \
                    item.end_line + 1 == prev.start_line
                lines = max(prev.end_line, item.end_line) - \
                    min(prev.start_line, item.start_line) + 1
                if prev.path == item.path and touching and lines <= self.cap:
                    out[i] = (first, evolve(prev, start_line=min(prev.start_line, item.start_line),
                                            end_line=max(prev.end_line, item.end_line)))
                    break
            else:
                out.append((candidate, item))
        return tuple(out)


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


class BestWindowVectors:
    """A VectorIndex scoring each chunk in scope by its best sub-window's cosine."""

    def __init__(self, store, vectors):
        self.store, self.vectors = store, vectors

    def search(self, vector, scope, limit):
        query = np.asarray(vector)
        hits = [Hit(c, n, float((self.vectors[c.chunk_id] @ query).max()))
                for n in self.store.notes(scope) for c in self.store.chunks_of(n.memory_id)]
        return sorted(hits, key=lambda h: -h.score)[:limit]


@frozen(kw_only=True)
class LineVectorRerank:
    """The rerank step, then a bonus from the best line's cosine to the query (top TOP)."""

    inner: RerankPolicy
    vectors: dict
    embed: object  # query text -> vector
    weight: float

    def rerank(self, candidates, query, leader=1.0):
        out = self.inner.rerank(candidates, query, leader)
        head = out[:TOP]
        q = np.asarray(self.embed(query.text))
        sims = [float((self.vectors[c.chunk.chunk_id] @ q).max()) for c in head]
        low, span = min(sims, default=0.0), (max(sims, default=0.0) - min(sims, default=0.0)) or 1.0
        head = sorted((c.with_bonus(self.weight * leader * (s - low) / span, "line-vector")
                       for c, s in zip(head, sims)), key=lambda c: -c.score)
        return (*head, *out[TOP:])


@frozen(kw_only=True)
class LineVectorFocus:
    """The focus step: most matched terms plus the line's cosine to the query."""

    vectors: dict
    embed: object

    def focus(self, chunk, free, query):
        lines = chunk.text.split("\n")
        sims = self.vectors[chunk.chunk_id] @ np.asarray(self.embed(query.text))
        at = max(free, key=lambda n: len(query.features.matched_terms(
            lines[n - chunk.start_line])) + sims[n - chunk.start_line])
        return Span(start_line=at, end_line=at)


class StatementEmbedder(CachedEmbedder):
    """The question word and auxiliary cut before the query is embedded."""

    def embed_query(self, text):
        return super().embed_query(QUESTION_WORDS.sub("", text).rstrip("?").strip() or text)


class LastLexical:
    """A LexicalIndex that remembers its last search, for the feedback rule below."""

    def __init__(self, inner):
        self.inner, self.last = inner, []

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def search(self, query, scope, limit):
        self.last = self.inner.search(query, scope, limit)
        return self.last


class FeedbackVectors:
    """Rocchio feedback: the query vector moves toward the top K chunks of the lexical
    list the same search made just before (the engine asks for that list first)."""

    def __init__(self, inner, lexical: LastLexical, embedder, top: int, weight: float):
        self.inner, self.lexical, self.embedder = inner, lexical, embedder
        self.top, self.weight = top, weight
        self.cache: dict[str, np.ndarray] = {}

    def search(self, vector, scope, limit):
        found = self.lexical.last[: self.top]
        if found:
            query = np.asarray(vector) + self.weight * np.mean(
                [self.vector(h.chunk) for h in found], axis=0)
            vector = query / np.linalg.norm(query)
        return self.inner.search(vector, scope, limit)

    def vector(self, chunk) -> np.ndarray:
        if chunk.chunk_id not in self.cache:
            self.cache[chunk.chunk_id] = self.embedder.embed_documents([chunk.indexed_text])[0]
        return self.cache[chunk.chunk_id]


@frozen(kw_only=True)
class QuestionLinePenalty:
    """The rerank step, then a candidate whose best-matching line is a question loses W."""

    inner: RerankPolicy
    weight: float

    def rerank(self, candidates, query, leader=1.0):
        out = self.inner.rerank(candidates, query, leader)
        head = []
        for c in out[:TOP]:
            best = max(c.chunk.text.split("\n"),
                       key=lambda line: len(query.features.matched_terms(line)))
            head.append(c.with_bonus(-self.weight * leader, "question-line")
                        if best.rstrip().endswith("?") else c)
        return (*sorted(head, key=lambda c: -c.score), *out[TOP:])


class Bench:
    """The real stack on locomo-dev, and services over it with some ports swapped."""

    def __init__(self, state_dir: str):
        self.settings = Settings.resolve(str(EVAL / "memory"), state_dir, watch=False)
        self.app = build(self.settings)
        self.embedder = CachedEmbedder(self.app.gateways.embedder())
        self.embedder.warm()
        self.embedder.wait_ready(300)
        self.app.gateways.embedder.override(self.embedder)
        self.service = self.app.use_cases.service()
        self.store = self.app.gateways.catalogue()
        self.queries = load_queries(str(EVAL / "queries.jsonl"))

    def with_ports(self, **ports):
        """A fresh service on the same index and model, with these gateways replaced."""
        app = build(self.settings)
        app.gateways.sqlite.override(providers.Object(self.app.gateways.sqlite()))
        app.gateways.embedder.override(providers.Object(self.embedder))
        for name, make in ports.items():
            getattr(app.gateways, name).override(providers.Object(make(app)))
        return app.use_cases.service()

    def measure(self, config: SearchConfig | None = None, service=None):
        service = service or self.service
        if config is not None:
            service = service.with_search_config(config)
        s = summarize(self.queries, run_queries(service, self.store, self.queries, limit=10),
                      [5, 10])
        return s["groups"]["all"]


def experiments(bench: Bench) -> dict:
    base = bench.service.engine.config
    chunks = [c for n in bench.store.notes(ScopeFilter(status=StatusFilter.ANY))
              for c in bench.store.chunks_of(n.memory_id)]
    lazy: dict = {}

    def vectors(kind, size=1, stride=1):
        key = (kind, size, stride)
        if key not in lazy:
            lazy[key] = late_line_vectors(bench.embedder.inner._encoder, chunks) \
                if kind == "late" else window_vectors(bench.embedder.inner, chunks, size, stride)
        return lazy[key]

    def with_lines(kind, weight, focus):
        def run():
            found = vectors(kind)
            config = evolve(base, rerank=LineVectorRerank(
                inner=base.rerank, vectors=found, embed=bench.embedder.embed_query,
                weight=weight)) if weight else base
            if focus:
                config = evolve(config, focus=LineVectorFocus(
                    vectors=found, embed=bench.embedder.embed_query))
            return bench.measure(config)
        return run

    def windows(size, stride, config=base):
        def run():
            found = vectors("windows", size, stride)
            service = bench.with_ports(vectors=lambda app: BestWindowVectors(
                app.gateways.catalogue(), found))
            return bench.measure(config, service)
        return run

    def feedback(top, weight):
        def run():
            lexical = LastLexical(bench.store)
            service = bench.with_ports(
                lexical=lambda app: lexical,
                vectors=lambda app: FeedbackVectors(app.gateways.vectors(), lexical,
                                                    bench.embedder.inner, top, weight))
            return bench.measure(service=service)
        return run

    found = {"base": lambda: bench.measure()}
    for cap, lines in ((24, 12), (24, 11), (22, 10), (18, 9)):
        context = MergeTouching(inner=evolve(base.context, max_item_lines=lines), cap=cap)
        found[f"merge-{cap}-{lines}"] = lambda c=context: bench.measure(evolve(base, context=c))
    for kind in ("late", "alone"):
        for weight in (0.25, 0.5, 1.0):
            found[f"{kind}-lines-w{weight}"] = with_lines(kind, weight, False)
        found[f"{kind}-lines-focus"] = with_lines(kind, 0.0, True)
    semantic_only = evolve(base, gather=evolve(base.gather, use_lexical=False, use_graph=False))
    for size, stride in ((8, 8), (4, 2), (3, 1), (3, 3), (2, 1)):
        found[f"windows-{size}-{stride}"] = windows(size, stride)
        found[f"windows-{size}-{stride}-semantic-only"] = windows(size, stride, semantic_only)
    found["semantic-only"] = lambda: bench.measure(semantic_only)
    for top, weight in ((1, 0.3), (1, 0.6), (3, 0.3), (3, 1.0)):
        found[f"feedback-{top}-{weight}"] = feedback(top, weight)
    found["statement-query"] = lambda: bench.measure(service=bench.with_ports(
        embedder=lambda app: StatementEmbedder(bench.embedder.inner)))
    for weight in (0.1, 0.2, 0.4):
        found[f"question-line-{weight}"] = lambda w=weight: bench.measure(evolve(
            base, rerank=QuestionLinePenalty(inner=base.rerank, weight=w)))
    return found


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--state-dir", required=True)
    p.add_argument("--only", help="comma-separated experiment names")
    args = p.parse_args()
    bench = Bench(args.state_dir)
    only = set(args.only.split(",")) if args.only else None
    print("| experiment | R@5 | MRR@10 | EH@5 | L@5 |\n|---|---|---|---|---|")
    for name, run in experiments(bench).items():
        if only and name not in only:
            continue
        s = run()
        print(f"| {name} | {s['R@5']:.3f} | {s['MRR@10']:.3f} | {s['EH@5']:.3f} "
              f"| {s['L@5']:.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
