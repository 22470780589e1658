"""RetrievalEngine: gather what a search needs from the stores, then run the ranking steps.

Nothing of one search is kept on the engine: each search's data travels in values
(Gathered, SearchTrace), so concurrent searches never read each other's state.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from attrs import evolve, frozen

from memory.application.search.gathering import StoreGatherer
from memory.application.search.requests import SearchRequest
from memory.application.search.config import SearchConfig
from memory.domain.budget import bounded_items
from memory.domain.candidates import Candidate, CandidateLists, Gathered, Query
from memory.domain.citing import NoteText, redacted
from memory.domain.evidence import AppliedScope, EvidenceItem, EvidencePacket, Generation
from memory.domain.freshness import Freshness
from memory.domain.no_answer import LOW_CONFIDENCE, unknown_names
from memory.domain.query_gate import PASS
from memory.domain.scope import ResolvedScope, ScopeFilter, ScopeNames, resolve_scope
from memory.ports.embedder import Embedder
from memory.ports.graph_provider import GraphProvider
from memory.ports.lexical_index import LexicalIndex
from memory.ports.note_catalogue import NoteCatalogue
from memory.ports.vector_index import VectorIndex


@frozen(kw_only=True)
class SearchTrace:
    """Everything a search saw and decided, for the packet and for memory_explain."""

    gathered: Gathered
    ranked: tuple[Candidate, ...]
    chosen: tuple[Candidate, ...]
    no_answer_reason: str | None  # None: something found is about the query
    warnings: tuple[str, ...]
    leads: bool = False  # chosen are leads for a question memory cannot answer

    @property
    def no_answer(self) -> bool:
        return self.no_answer_reason is not None

    @property
    def query(self) -> Query:
        return self.gathered.query


class RetrievalEngine:
    """Runs one search as gather -> pure steps -> gather -> pure steps, under one config."""

    def __init__(self, lexical: LexicalIndex, catalogue: NoteCatalogue, vectors: VectorIndex,
                 embedder: Embedder, graph: GraphProvider | None,
                 config: SearchConfig | None = None,
                 default_repository: Callable[[], tuple[str, str] | None] | None = None,
                 today: Callable[[], str] | None = None, *,
                 gatherer: StoreGatherer | None = None,
                 scope_names: Callable[[], ScopeNames | None] | None = None):
        self._ports = (lexical, catalogue, vectors, embedder, graph)
        self._config = config or SearchConfig()
        self._default_repository = default_repository or (lambda: None)
        self._today = today or (lambda: "")
        # The names notes give scopes: a scope no note has (a typo) is said so, not silent.
        self._scope_names = scope_names or (lambda: None)
        self._gather = gatherer or StoreGatherer(lexical, catalogue, vectors, embedder, graph)
        self._has_graph = graph is not None

    @property
    def config(self) -> SearchConfig:
        return self._config

    def with_config(self, config: SearchConfig | None = None, **changes: Any) -> RetrievalEngine:
        """The same stores searched under another configuration (benchmarks, ablations)."""
        return RetrievalEngine(*self._ports, evolve(config or self._config, **changes),
                               self._default_repository, self._today, gatherer=self._gather,
                               scope_names=self._scope_names)

    def search(self, request: SearchRequest, generation: Generation,
               warnings: Sequence[str] = (),
               freshness: Freshness = Freshness.CURRENT) -> EvidencePacket:
        trace = self.trace(request)
        found = self.evidence(trace) if trace.leads or not trace.no_answer else ()
        return EvidencePacket(
            query=request.query, scope=AppliedScope.of(trace.query.scope), generation=generation,
            no_answer=trace.no_answer, no_answer_reason=trace.no_answer_reason,
            items=() if trace.no_answer else found, leads=found if trace.leads else (),
            warnings=(*warnings, *trace.warnings), freshness=freshness)

    def scope(self, query: str, explicit: ScopeFilter) -> ResolvedScope:
        """The scope a request runs under: its filters, and the workspace's default."""
        return resolve_scope(query, explicit, self._default_repository())

    def trace(self, request: SearchRequest) -> SearchTrace:
        """Gate the query, gather the lists, then fuse, rerank, lift linked notes, judge, bring
        the leading notes' outcome sections up and select."""
        cfg = self._config
        asked = Query.of(request.query, self.scope(request.query, request.filter), self._today())
        gate = cfg.gate.judge(request.query) if cfg.gate is not None else PASS
        if not gate.search:
            return SearchTrace(gathered=Gathered(query=asked, lists=CandidateLists()), ranked=(),
                               chosen=(), no_answer_reason=gate.no_answer_reason,
                               warnings=gate.warnings)
        gathered = self._gather.lists(asked, cfg.gather)
        query, features = gathered.query, gathered.query.features
        ranked = cfg.rerank.rerank(cfg.fusion.fuse(gathered.lists, features), query,
                                   cfg.fusion.leader)
        if cfg.hop is not None and cfg.gather.use_graph and self._has_graph:
            parents = self._gather.links(cfg.hop.parents_of(ranked), query, cfg.hop)
            ranked = cfg.hop.lift(ranked, parents, query, gathered.lists.position())
        unknown = self._gather.still_unknown(unknown_names(ranked, features), query)
        why = gate.no_answer_reason or cfg.no_answer.decide(ranked, query, unknown)
        warnings = (*self._unmatched(query.scope.filter), *gathered.warnings, *gate.warnings,
                    *((LOW_CONFIDENCE,) if why and ranked and gate.no_answer_reason is None
                      else ()))
        if cfg.outcome is not None:
            ranked = cfg.outcome.lift(ranked, self._gather.chunks(cfg.outcome.leading(ranked)))
        if gate.leads:
            return SearchTrace(gathered=gathered, ranked=tuple(ranked), no_answer_reason=why,
                               chosen=cfg.select.select(gate.leads_among(ranked),
                                                        min(request.limit, gate.leads), query),
                               warnings=warnings, leads=True)
        chosen = cfg.select.select(ranked, request.limit, query)
        if cfg.order is not None:
            chosen = cfg.order.order(chosen, ranked, query)
        return SearchTrace(gathered=gathered, ranked=tuple(ranked), chosen=chosen,
                           no_answer_reason=why, warnings=warnings)

    def _unmatched(self, scope: ScopeFilter) -> tuple[str, ...]:
        """Warnings for a repository, project or ticket of the scope that no note names."""
        if not (scope.repository or scope.project or scope.ticket):
            return ()  # the names are only read (once per generation) when a scope names one
        names = self._scope_names()
        return names.unmatched(scope) if names is not None else ()

    def evidence(self, trace: SearchTrace) -> tuple[EvidenceItem, ...]:
        """Read the chosen notes' lines, then focus, expand, redact and bound each item."""
        texts, cited = self._cited(trace)
        return bounded_items(redacted([item for _, item in cited], texts),
                             self._config.context.budget_chars)

    def explained(self, request: SearchRequest) -> tuple[SearchTrace, tuple[Candidate, ...]]:
        """A search's trace for memory_explain, with the candidates it returns items for."""
        trace = self.trace(request)
        return trace, self.returned(trace)

    def returned(self, trace: SearchTrace) -> tuple[Candidate, ...]:
        """The candidates search returns an item for: chosen, cited (a candidate whose lines
        an earlier item already cites gives none) and not a no-answer."""
        return () if trace.no_answer else tuple(c for c, _ in self._cited(trace)[1])

    def _cited(self, trace: SearchTrace) -> tuple[dict[str, NoteText],
                                                  tuple[tuple[Candidate, EvidenceItem], ...]]:
        cfg = self._config
        texts = self._gather.texts(c.note.memory_id for c in trace.chosen)
        return texts, cfg.context.cited(trace.chosen, texts, trace.query, cfg.focus)
