"""RetrievalEngine: scope, three candidate lists, RRF, rerank, dedup, context, packet."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from attrs import evolve, field, frozen, validators

from memory.application.requests import SearchRequest
from memory.domain.context import Span, allot, expand_span
from memory.domain.evidence import EvidenceItem, EvidencePacket, Generation, Signals
from memory.domain.fusion import normalized_score_fusion, reciprocal_rank_fusion
from memory.domain.notes import Chunk, Note
from memory.domain.ranking import (Candidate, NoAnswerPolicy, RerankPolicy, dedup,
                                   drop_noise, is_no_answer, rerank, unknown_names)
from memory.domain.secrets import key_block_open_at, redact_lines, redact_text
from memory.domain.scope import ResolvedScope, ScopeFilter, StatusFilter, resolve_scope
from memory.domain.text import QueryFeatures, mentions_name
from memory.ports.chunk_store import ChunkStore, Hit
from memory.ports.embedder import Embedder
from memory.domain.errors import NotFound
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
    # A related note counts only if its proximity is this many times the median proximity
    # of what the graph returned: where everything is tied through the same hubs (one
    # project, shared tags) proximity carries no information and must not add noise.
    graph_contrast: float = 2.0
    rrf_k: int = 10
    # "score": min-max normalised scores, summed with the weights below (keeps how far a
    # list's leader is ahead); "rrf": reciprocal rank fusion with rrf_k.
    fusion: str = field(default="score", validator=validators.in_(("score", "rrf")))
    weights: dict = field(factory=lambda: {"lexical": 1.0, "semantic": 0.5, "graph": 0.1})
    # When no lexical hit covers this share of the query's words, the words are probably
    # not the ones the notes use (a paraphrase): trust the vectors more for this query.
    weak_lexical_coverage: float = 0.5
    rescue_weights: dict = field(factory=lambda: {"lexical": 0.5, "semantic": 1.0, "graph": 0.3})
    # Multi-hop: notes the best results link to explicitly, if they also speak to the
    # query, are placed just below the note that links to them.
    hop_parents: int = 2
    hop_children: int = 2
    hop_decay: float = 0.85
    hop_min_relevance: float = 0.3  # share of query words the link line + target cover
    hop_relations: tuple = ("references", "related", "supersedes", "superseded_by")
    per_note: int = 3
    diversify: bool = False
    budget_chars: int = 24000
    max_item_lines: int = 12
    focus: bool = True  # centre each item on its best-matching line
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
        self._pool: ThreadPoolExecutor | None = None

    def search(self, request: SearchRequest, generation: Generation,
               warnings: Sequence[str] = (), freshness: str = "current") -> EvidencePacket:
        trace = self.trace(request)
        self._features = trace.features
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
        # The model embeds the query on another thread while FTS5 ranks (both release the
        # GIL): on two cores the lexical list costs no wall time.
        vector = self._embedding_pool().submit(self._query_vector, request.query) \
            if cfg.use_semantic else None
        lexical = tuple(self._chunks.search(request.query, scope.filter, cfg.lexical_depth)) \
            if cfg.use_lexical else ()
        semantic = tuple(self._semantic(vector.result(), scope.filter, warnings)) \
            if vector is not None else ()
        by_id: dict[str, Hit] = {}
        for hit in (*lexical, *semantic):
            by_id.setdefault(hit.chunk.chunk_id, hit)
        graph = tuple(self._graph_list(lexical, semantic, scope, features, by_id, warnings)) \
            if cfg.use_graph else ()
        weights = self._weights(lexical, features)
        if cfg.fusion == "score":
            fused = normalized_score_fusion(
                {"lexical": [(h.chunk.chunk_id, h.score) for h in lexical],
                 "semantic": [(h.chunk.chunk_id, h.score) for h in semantic],
                 "graph": [(cid, 1.0 / (1 + i)) for i, cid in enumerate(graph)]}, weights)
        else:
            fused = reciprocal_rank_fusion(
                {"lexical": [h.chunk.chunk_id for h in lexical],
                 "semantic": [h.chunk.chunk_id for h in semantic],
                 "graph": list(graph)}, weights, cfg.rrf_k)
        leader = 1.0 if cfg.fusion == "score" else 1.0 / (cfg.rrf_k + 1)
        ranked = rerank(self._candidates(fused, lexical, semantic, graph, by_id), features,
                        scope.query_tickets, self._today(), cfg.rerank, leader)
        ranked = self._hop(ranked, scope, features, by_id)
        no_answer = is_no_answer(ranked, features, cfg.no_answer,
                                 self._unknown(ranked, features, scope.filter))
        if no_answer and ranked:
            warnings.append("low confidence: nothing found is clearly about this query")
        chosen = dedup(drop_noise(ranked, cfg.no_answer), request.limit, cfg.per_note,
                       cfg.diversify)
        return SearchTrace(scope=scope, features=features, lexical=lexical, semantic=semantic,
                           graph=graph, ranked=tuple(ranked), chosen=tuple(chosen),
                           no_answer=no_answer, warnings=tuple(warnings))

    def _hop(self, ranked: list[Candidate], scope: ResolvedScope, features: QueryFeatures,
             by_id: dict[str, Hit]) -> list[Candidate]:
        cfg = self.config
        if self._graph is None or not cfg.use_graph or cfg.hop_parents <= 0 or not ranked:
            return ranked
        parents = list(dict.fromkeys(c.note.memory_id for c in ranked))[: cfg.hop_parents]
        best = {c.note.memory_id: c for c in reversed(ranked)}  # each note's best candidate
        position = {cid: i for i, cid in enumerate(by_id)}
        lifted: dict[str, Candidate] = {}
        for parent_id in parents:
            parent = best[parent_id]
            target = parent.score * cfg.hop_decay
            lines = self._chunks.lines(parent_id)
            children = []
            for n, line_no in self._linked(parent_id):
                note = self._chunks.note(n)
                if note is None or n in parents or not scope.filter.admits(note):
                    continue
                current = best.get(n)
                if n in lifted or (current is not None and current.score >= target):
                    continue
                chunk = self._best_chunk_of(note, features, position)
                if chunk is None:
                    continue
                # The sentence that links says why: "Project lead: [[Lena Fischer]]".
                context = max((features.coverage(line) for line in _mentions(lines, note, line_no)),
                              default=0.0)
                relevance = features.coverage(chunk.indexed_text) + context
                if relevance >= cfg.hop_min_relevance:
                    children.append((relevance, note, chunk, current))
            children.sort(key=lambda x: -x[0])
            for _, note, chunk, current in children[: cfg.hop_children]:
                base = current if current is not None and current.chunk == chunk else \
                    Candidate(chunk=chunk, note=note)
                lifted[note.memory_id] = base.with_bonus(target - base.score,
                                                         f"linked-from:{parent_id}")
        if not lifted:
            return ranked
        keep = [c for c in ranked if not (c.note.memory_id in lifted and
                                          c.chunk == lifted[c.note.memory_id].chunk)]
        return sorted([*keep, *lifted.values()], key=lambda c: -c.score)

    def _linked(self, memory_id: str) -> list[tuple[str, int | None]]:
        """Notes a note links to or relates with, and the line of its own that says so."""
        try:
            found = self._graph.neighbors(memory_id, 1)
        except (Unavailable, StoreError, NotFound):
            return []
        out = []
        for n in found:
            via = [r for r in n.via if r.relation in self.config.hop_relations]
            if n.kind == "note" and via:
                line = next((r.source_line for r in via if r.source == memory_id), None)
                out.append((n.node, line))
        return out

    def _weights(self, lexical: Sequence[Hit], features: QueryFeatures) -> dict:
        best = max((features.coverage(h.chunk.indexed_text) for h in lexical[:3]), default=0.0)
        return self.config.weights if best >= self.config.weak_lexical_coverage \
            else self.config.rescue_weights

    def _unknown(self, ranked, features: QueryFeatures, scope: ScopeFilter) -> tuple[str, ...]:
        """Query names that nothing in scope mentions, whatever its status.

        Status is about when a fact held, not what it is about: a question on how things
        were before Redis is about Redis even when only superseded notes answer it.
        """
        missing = unknown_names(ranked, features)
        if not missing or scope.status is StatusFilter.ANY:
            return missing
        wider = evolve(scope, status=StatusFilter.ANY)
        return tuple(name for name in missing if not any(
            mentions_name(f"{h.chunk.indexed_text} {' '.join(h.note.names)}", name,
                          exact=name in features.identifiers)
            for h in self._chunks.search(name, wider, 5)))

    def _embedding_pool(self) -> ThreadPoolExecutor:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="query-embed")
        return self._pool

    def _query_vector(self, query: str) -> tuple[Sequence[float] | None, str | None]:
        """The query's vector, or None and the warning that says why there is none."""
        state = self._embedder.state()
        if state.startswith("failed"):
            return None, f"semantic search unavailable: {state}"
        if state != "ready":
            self._embedder.warm()
            if not self._embedder.wait_ready(self.config.semantic_wait_s):
                return None, "semantic search skipped: the embedding model is still loading"
        try:
            return self._embedder.embed_query(query), None
        except (Unavailable, StoreError) as exc:
            return None, f"semantic search unavailable: {exc}"

    def _semantic(self, embedded: tuple[Sequence[float] | None, str | None],
                  scope: ScopeFilter, warnings: list[str]) -> list[Hit]:
        vector, why = embedded
        if vector is None:
            warnings.append(why)
            return []
        try:
            return self._vectors.search(vector, scope, self.config.semantic_depth)
        except (Unavailable, StoreError) as exc:
            warnings.append(f"semantic search unavailable: {exc}")
            return []

    def _graph_list(self, lexical, semantic, scope: ResolvedScope, features: QueryFeatures,
                    by_id: dict[str, Hit], warnings: list[str]) -> list[str]:
        """Notes the query names, then notes close to them and to the best candidates.

        A named note (ticket id, memory_id, path, title) is at distance zero from the
        query, so it heads this list even when no word of it matched.
        """
        named = self._named(scope, features)
        seeds = list(dict.fromkeys(
            [*named, *(h.note.memory_id for h in lexical[: self.config.graph_seeds]),
             *(h.note.memory_id for h in semantic[: self.config.graph_seeds])]))
        related: list[tuple[str, float]] = []
        if self._graph is not None and seeds:
            try:
                if self._graph.current() is None:
                    warnings.append("graph unavailable: run a full refresh to build it")
                else:
                    related = self._graph.related(seeds, self.config.graph_depth * 3)
            except (Unavailable, StoreError) as exc:
                warnings.append(f"graph unavailable: {exc}")
        admitted = []
        for memory_id, score in related:
            note = self._chunks.note(memory_id)
            if note is not None and scope.filter.admits(note):
                admitted.append((note, score))
        notes = [n for n in (self._chunks.note(m) for m in named)
                 if n is not None and scope.filter.admits(n)]
        notes += [n for n, _ in _standing_out(admitted, self.config.graph_contrast)]
        position = {cid: i for i, cid in enumerate(by_id)}
        order: list[str] = []
        for note in notes:
            chunk = self._best_chunk_of(note, features, position)
            if chunk is not None and chunk.chunk_id not in order:
                by_id.setdefault(chunk.chunk_id, Hit(chunk, note, 0.0))
                order.append(chunk.chunk_id)
            if len(order) >= self.config.graph_depth:
                break
        return order

    def _named(self, scope: ResolvedScope, features: QueryFeatures) -> list[str]:
        """memory_ids of notes the query names by ticket id, identifier or path."""
        named: list[str] = []
        for ticket in scope.query_tickets:
            named += [n.memory_id for n in self._chunks.find(ticket)]
            named += [n.memory_id for n in self._chunks.notes(
                ScopeFilter(ticket=ticket, status=StatusFilter.ANY))][:3]
        for name in (*features.identifiers, *features.paths, *features.phrases):
            named += [n.memory_id for n in self._chunks.find(name)][:3]
        return list(dict.fromkeys(named))

    def _best_chunk_of(self, note: Note, features: QueryFeatures,
                       position: dict[str, int]) -> Chunk | None:
        """The note's chunk another signal ranked best, else the one covering most terms."""
        chunks = self._chunks.chunks_of(note.memory_id)
        known = [c for c in chunks if c.chunk_id in position]
        if known:
            return min(known, key=lambda c: position[c.chunk_id])
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
            if item is None:  # everything it would cite is already cited above
                continue
            blocked.append(Span(start_line=item.start_line, end_line=item.end_line))
            items.append(item)
        return tuple(items)

    def _evidence(self, c: Candidate, per_item: int,
                  blocked: Sequence[Span]) -> EvidenceItem | None:
        span = self._focus(c, blocked)
        if span is None:
            return None
        text = c.chunk.text
        lines = self._chunks.lines(c.note.memory_id)
        if lines:
            # Never grow into the front matter: the body starts where the first chunk does.
            chunks = self._chunks.chunks_of(c.note.memory_id)
            body = Span(start_line=1, end_line=chunks[0].start_line - 1) \
                if chunks and chunks[0].start_line > 1 else None
            span = expand_span(span, lines, self.config.max_item_lines, per_item,
                               [*blocked, body] if body else blocked)
            text = _redacted(lines, span)
        else:
            text = redact_text(text)
        return EvidenceItem(
            memory_id=c.note.memory_id, path=c.note.path, title=redact_text(c.note.title),
            heading=redact_text(c.chunk.heading), start_line=span.start_line,
            end_line=span.end_line,
            text=text, score=c.score,
            signals=Signals(lexical=c.lexical_rank, semantic=c.semantic_rank, graph=c.graph_rank),
            status=c.note.effective_status.value, reasons=c.reasons)

    def _focus(self, c: Candidate, blocked: Sequence[Span]) -> Span | None:
        """Where the item starts: the chunk's line matching most query terms (with focus on),
        else the chunk's own span; only lines no earlier item cites. None if none is left."""
        taken = {i for b in blocked for i in range(b.start_line, b.end_line + 1)}
        free = [n for n in range(c.chunk.start_line, c.chunk.end_line + 1) if n not in taken]
        if not free:
            return None
        features = self._features if self.config.focus else None
        lines = c.chunk.text.split("\n")
        best, best_hits = None, 0
        for number in free if features else ():
            hits = len(features.matched_terms(lines[number - c.chunk.start_line]))
            if hits > best_hits:
                best, best_hits = number, hits
        if best is not None:
            return Span(start_line=best, end_line=best)
        run = [free[0]]
        for n in free[1:]:  # the first contiguous run of free lines
            if n != run[-1] + 1:
                break
            run.append(n)
        return Span(start_line=run[0], end_line=run[-1])

    def with_config(self, **changes) -> RetrievalEngine:
        clone = RetrievalEngine(self._chunks, self._vectors, self._embedder, self._graph,
                                evolve(self.config, **changes), self._default_repository,
                                self._today)
        return clone


def _redacted(lines: Sequence[str], span: Span) -> str:
    # A private key block can open any distance above the cited span (PGP keys run to
    # hundreds of lines): redact from its BEGIN so the block is seen whole.
    first = key_block_open_at(lines, span.start_line) or span.start_line
    clean, _ = redact_lines(lines[first - 1: span.end_line])
    return "\n".join(clean[span.start_line - first:])


def _standing_out(related: list, contrast: float) -> list:
    """Keep (item, score) pairs whose score is at least `contrast` times the median."""
    if not related or contrast <= 0:
        return related
    scores = sorted(score for _, score in related)
    median = scores[len(scores) // 2]
    return [(m, score) for m, score in related if score >= contrast * median]


def _mentions(lines: Sequence[str], note: Note, line_no: int | None) -> list[str]:
    """Lines of a parent note that name a linked note (or the line the graph says links)."""
    names = [n.lower() for n in (note.title, *note.aliases) if n and len(n) > 2]
    found = [line for line in lines if any(name in line.lower() for name in names)]
    if line_no and 0 < line_no <= len(lines):
        found.append(lines[line_no - 1])
    return found
