"""RetrievalEngine: scope, three candidate lists, RRF, rerank, dedup, context, packet."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from attrs import evolve, field, frozen

from memory.application.requests import SearchRequest
from memory.domain.context import Span, allot, expand_span
from memory.domain.evidence import EvidenceItem, EvidencePacket, Generation, Signals
from memory.domain.fusion import reciprocal_rank_fusion
from memory.domain.notes import Chunk, Note
from memory.domain.ranking import (Candidate, NoAnswerPolicy, RerankPolicy, dedup,
                                   is_no_answer, rerank)
from memory.domain.secrets import redact_lines, redact_text
from memory.domain.scope import ResolvedScope, ScopeFilter, StatusFilter, resolve_scope
from memory.domain.text import QueryFeatures
from memory.ports.chunk_store import ChunkStore, Hit
from memory.ports.embedder import Embedder
from memory.ports.errors import StoreError, Unavailable
from memory.ports.graph_provider import GraphProvider
from memory.ports.vector_index import VectorIndex


@frozen(kw_only=True)
class SearchConfig:
    """Tunables of the search flow; defaults measured on the eval set (docs/benchmarks.md)."""

    lexical_depth: int = 50
    semantic_depth: int = 50
    graph_depth: int = 20
    graph_seeds: int = 5
    rrf_k: int = 60
    weights: dict = field(factory=lambda: {"lexical": 1.0, "semantic": 0.5, "graph": 0.3})
    per_note: int = 3
    budget_chars: int = 8000
    max_item_lines: int = 12
    semantic_wait_s: float = 2.0
    rerank: RerankPolicy = RerankPolicy()
    no_answer: NoAnswerPolicy = NoAnswerPolicy()
    use_lexical: bool = True
    use_semantic: bool = True
    use_graph: bool = True


@frozen(kw_only=True)
class SearchTrace:
    """Everything a search saw, for the packet and for memory_explain."""

    scope: ResolvedScope
    features: QueryFeatures
    lexical: tuple[Hit, ...]
    semantic: tuple[Hit, ...]
    graph: tuple[str, ...]  # chunk ids in graph order
    ranked: tuple[Candidate, ...]
    chosen: tuple[Candidate, ...]
    no_answer: bool
    warnings: tuple[str, ...]


class RetrievalEngine:
    """Plans provider calls for one query and turns what they find into evidence."""

    def __init__(self, chunks: ChunkStore, vectors: VectorIndex, embedder: Embedder,
                 graph: GraphProvider | None, config: SearchConfig | None = None,
                 default_repository: Callable[[], tuple[str, str] | None] | None = None,
                 today: Callable[[], str] | None = None):
        self._chunks = chunks
        self._vectors = vectors
        self._embedder = embedder
        self._graph = graph
        self.config = config or SearchConfig()
        self._default_repository = default_repository or (lambda: None)
        self._today = today or (lambda: "")

    def search(self, request: SearchRequest, generation: Generation,
               warnings: Sequence[str] = (), freshness: str = "current") -> EvidencePacket:
        trace = self.trace(request)
        items = self._evidence_all(trace.chosen)
        return EvidencePacket(
            query=request.query, scope=trace.scope.as_dict(), generation=generation,
            no_answer=trace.no_answer, items=() if trace.no_answer else items,
            warnings=(*warnings, *trace.warnings), freshness=freshness)

    def trace(self, request: SearchRequest) -> SearchTrace:
        cfg = self.config
        scope = resolve_scope(request.query, request.filter, self._default_repository())
        features = QueryFeatures.of(request.query)
        warnings: list[str] = []
        lexical = tuple(self._chunks.search(request.query, scope.filter, cfg.lexical_depth)) \
            if cfg.use_lexical else ()
        semantic = tuple(self._semantic(request.query, scope.filter, warnings)) \
            if cfg.use_semantic else ()
        by_id: dict[str, Hit] = {}
        for hit in (*lexical, *semantic):
            by_id.setdefault(hit.chunk.chunk_id, hit)
        graph = tuple(self._graph_list(lexical, semantic, scope, features, by_id, warnings)) \
            if cfg.use_graph else ()
        fused = reciprocal_rank_fusion(
            {"lexical": [h.chunk.chunk_id for h in lexical],
             "semantic": [h.chunk.chunk_id for h in semantic],
             "graph": list(graph)}, cfg.weights, cfg.rrf_k)
        ranked = rerank(self._candidates(fused, lexical, semantic, graph, by_id), features,
                        scope.query_tickets, self._today(), cfg.rerank)
        no_answer = is_no_answer(ranked, features, cfg.no_answer)
        if no_answer and ranked:
            warnings.append("low confidence: nothing found is clearly about this query")
        chosen = dedup(ranked, request.limit, cfg.per_note)
        return SearchTrace(scope=scope, features=features, lexical=lexical, semantic=semantic,
                           graph=graph, ranked=tuple(ranked), chosen=tuple(chosen),
                           no_answer=no_answer, warnings=tuple(warnings))

    def _semantic(self, query: str, scope: ScopeFilter, warnings: list[str]) -> list[Hit]:
        state = self._embedder.state()
        if state.startswith("failed"):
            warnings.append(f"semantic search unavailable: {state}")
            return []
        if state != "ready":
            self._embedder.warm()
            if not self._embedder.wait_ready(self.config.semantic_wait_s):
                warnings.append("semantic search skipped: the embedding model is still loading")
                return []
        try:
            vector = self._embedder.embed_query(query)
            return self._vectors.search(vector, scope, self.config.semantic_depth)
        except (Unavailable, StoreError) as exc:
            warnings.append(f"semantic search unavailable: {exc}")
            return []

    def _graph_list(self, lexical, semantic, scope: ResolvedScope, features: QueryFeatures,
                    by_id: dict[str, Hit], warnings: list[str]) -> list[str]:
        """Chunks of notes close in the graph to the best candidates and to named notes."""
        if self._graph is None:
            return []
        try:
            if self._graph.current() is None:
                warnings.append("graph unavailable: run a full refresh to build it")
                return []
            seeds = self._seeds(lexical, semantic, scope, features)
            related = self._graph.related(seeds, self.config.graph_depth * 3)
        except (Unavailable, StoreError) as exc:
            warnings.append(f"graph unavailable: {exc}")
            return []
        order: list[str] = []
        for memory_id, _score in related:
            note = self._chunks.note(memory_id)
            if note is None or not scope.filter.admits(note):
                continue
            chunk = self._best_chunk_of(note, features, by_id)
            if chunk is not None:
                by_id.setdefault(chunk.chunk_id, Hit(chunk, note, 0.0))
                order.append(chunk.chunk_id)
            if len(order) >= self.config.graph_depth:
                break
        return order

    def _seeds(self, lexical, semantic, scope: ResolvedScope, features: QueryFeatures) -> list[str]:
        seeds: list[str] = []
        for ticket in scope.query_tickets:
            seeds += [n.memory_id for n in self._chunks.find(ticket)]
            seeds += [n.memory_id for n in self._chunks.notes(
                ScopeFilter(ticket=ticket, status=StatusFilter.ANY))][:3]
        for name in (*features.identifiers, *features.paths):
            seeds += [n.memory_id for n in self._chunks.find(name)][:3]
        for hits in (lexical, semantic):
            seeds += [h.note.memory_id for h in hits[: self.config.graph_seeds]]
        return list(dict.fromkeys(seeds))

    def _best_chunk_of(self, note: Note, features: QueryFeatures,
                       by_id: dict[str, Hit]) -> Chunk | None:
        chunks = self._chunks.chunks_of(note.memory_id)
        known = [c for c in chunks if c.chunk_id in by_id]
        if known:
            return known[0]
        if not chunks:
            return None
        return max(chunks, key=lambda c: (features.coverage(c.indexed_text), -c.ordinal))

    @staticmethod
    def _candidates(fused, lexical, semantic, graph, by_id) -> list[Candidate]:
        lex = {h.chunk.chunk_id: (i, h.score) for i, h in enumerate(lexical, 1)}
        sem = {h.chunk.chunk_id: (i, h.score) for i, h in enumerate(semantic, 1)}
        gra = {cid: i for i, cid in enumerate(graph, 1)}
        out = []
        for chunk_id, score in fused:
            hit = by_id[chunk_id]
            lr, ls = lex.get(chunk_id, (None, None))
            sr, ss = sem.get(chunk_id, (None, None))
            out.append(Candidate(chunk=hit.chunk, note=hit.note, fused=score, lexical_rank=lr,
                                 lexical_score=ls, semantic_rank=sr, semantic_score=ss,
                                 graph_rank=gra.get(chunk_id)))
        return out

    def _evidence_all(self, chosen: Sequence[Candidate]) -> tuple[EvidenceItem, ...]:
        """Expand each item in rank order; later items never overlap earlier ones."""
        cited: dict[str, list[Span]] = {}
        per_item = allot(self.config.budget_chars, len(chosen))
        items = []
        for c in chosen:
            blocked = cited.setdefault(c.note.path, [])
            item = self._evidence(c, per_item, blocked)
            blocked.append(Span(start_line=item.start_line, end_line=item.end_line))
            items.append(item)
        return tuple(items)

    def _evidence(self, c: Candidate, per_item: int, blocked: Sequence[Span]) -> EvidenceItem:
        span = Span(start_line=c.chunk.start_line, end_line=c.chunk.end_line)
        text = c.chunk.text
        lines = self._chunks.lines(c.note.memory_id)
        if lines:
            span = expand_span(span, lines, self.config.max_item_lines, per_item, blocked)
            text = _redacted(lines, span)
        else:
            text = redact_text(text)
        return EvidenceItem(
            memory_id=c.note.memory_id, path=c.note.path, title=c.note.title,
            heading=c.chunk.heading, start_line=span.start_line, end_line=span.end_line,
            text=text, score=c.score,
            signals=Signals(lexical=c.lexical_rank, semantic=c.semantic_rank, graph=c.graph_rank),
            status=c.note.effective_status.value, reasons=c.reasons)

    def with_config(self, **changes) -> RetrievalEngine:
        clone = RetrievalEngine(self._chunks, self._vectors, self._embedder, self._graph,
                                evolve(self.config, **changes), self._default_repository,
                                self._today)
        return clone


# A private key block can open well above a cited span; look this far back for it.
SECRET_LOOKBACK = 100


def _redacted(lines: Sequence[str], span: Span) -> str:
    first = max(1, span.start_line - SECRET_LOOKBACK)
    clean, _ = redact_lines(lines[first - 1: span.end_line])
    return "\n".join(clean[span.start_line - first:])
