"""MemoryService: the eight operations agents call, with validation and policy."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, TypeVar

from attrs import asdict, evolve

from memory.application.search.explaining import explanation, identity_explanation
from memory.application.health_check import HealthCheck
from memory.application.refresh.indexer import Indexer, Progress
from memory.application.graph.scope import ScopeFence, graph_id, outside_scope
from memory.application.search.requests import (MAX_DEPTH, MAX_NAME_CHARS, MAX_NOTE_CHARS,
                                         MAX_QUERY_CHARS, SearchRequest, bounded_int, clean_text,
                                         line_range, scope_filter)
from memory.application.browse.note_texts import NoteTexts
from memory.application.search.retrieval import RetrievalEngine
from memory.application.search.config import SearchConfig
from memory.application.refresh.verdict import CURRENT, Verdict, read_verdict
from memory.domain.budget import shown_name
from memory.domain.errors import InvalidRequest, NotFound, Unavailable
from memory.domain.evidence import AppliedScope, EvidencePacket, Generation
from memory.domain.explanation import Explanation
from memory.domain.feedback import RELEVANCE, FeedbackReceipt
from memory.domain.health import NO_SHARED_INDEX, Health, WriteAccess, refresh_advice
from memory.domain.messages import Action, Message
from memory.domain.notes import Note, is_markdown
from memory.domain.reading import Neighbourhood, NoteRead, NoteRef, RelationPath
from memory.domain.redacted import redacted
from memory.domain.cancellation import CancelToken
from memory.domain.refresh import ASKED_MODES, RefreshMode, RefreshReport
from memory.domain.scope import ResolvedScope
from memory.ports.clock import Clock
from memory.ports.embedder import Embedder
from memory.ports.graph_generations import GraphGenerations
from memory.ports.graph_provider import GraphProvider
from memory.ports.index_generations import IndexGenerations, ReadSnapshot
from memory.ports.journal import FeedbackLog, RefreshHistory
from memory.ports.lexical_index import LexicalIndex
from memory.ports.note_catalogue import NoteCatalogue
from memory.ports.note_source import NoteSource
from memory.ports.refresh_progress import RefreshProgressBoard

READ_ATTEMPTS = 5  # of a search that keeps seeing new generations published
NO_INDEX = Message("not indexed: no index yet; run ", Action.REFRESH,
                   " to build it (nothing can be found)")


def no_note(name: str) -> Message:
    return Message(f"no note named {name!r} (try ", Action.SEARCH, " to find its memory_id)")


T = TypeVar("T")


class MemoryService:
    """Policy around retrieval and refresh: validate, pick the generation, shape answers."""

    def __init__(self, *, engine: RetrievalEngine, indexer: Indexer, source: NoteSource,
                 lexical: LexicalIndex, catalogue: NoteCatalogue,
                 index: IndexGenerations, graph: GraphProvider | None,
                 graphs: GraphGenerations | None, embedder: Embedder, feedback: FeedbackLog,
                 history: RefreshHistory, clock: Clock,
                 before_search: Callable[[], Verdict] | None = None,
                 board: RefreshProgressBoard | None = None,
                 writes: WriteAccess = WriteAccess(enabled=False), shared_index: bool = False):
        self.engine = engine
        self._indexer = indexer
        self._catalogue, self._index = catalogue, index
        self._graph, self._embedder, self._feedback = graph, embedder, feedback
        # The catch-up-or-report step every read runs first (none: the index as it is).
        self._before_search = before_search or (lambda: CURRENT)
        self._clock, self._board = clock, board
        self._texts = NoteTexts(source=source, catalogue=catalogue)
        self._health = HealthCheck(source=source, lexical=lexical, catalogue=catalogue,
                                   index=index, graph=graph, graphs=graphs, embedder=embedder,
                                   feedback=feedback, history=history, clock=clock,
                                   graph_lag=indexer.graph_lag, board=board, writes=writes,
                                   shared_index=shared_index)
        self._no_index, self._shared = NO_SHARED_INDEX if shared_index else NO_INDEX, shared_index

    def with_search_config(self, config: SearchConfig) -> MemoryService:
        """This service searching under another configuration (benchmarks, ablations)."""
        clone = copy.copy(self)
        clone.engine = self.engine.with_config(config)
        return clone

    # -- reading -------------------------------------------------------------------------

    def search(self, query: object, **filters: Any) -> EvidencePacket:
        request = SearchRequest.parse(query, **filters)
        verdict = self._before_search()

        def read(generation: Generation, warnings: list[str]) -> EvidencePacket:
            judged = read_verdict(verdict, generation, warnings)
            said = judged.warnings
            packet = self.engine.search(request, generation, warnings=said,
                                        freshness=judged.freshness)
            # No index: nothing was searched, and the missing index is the reason.
            missing = generation.index is None and packet.no_answer and said
            return evolve(packet, no_answer_reason=said[0]) if missing else packet
        return self._from_one_generation(read)

    def get(self, identity: object, start_line: object = None,
            end_line: object = None) -> NoteRead:
        name = clean_text(identity, "identity", MAX_NAME_CHARS)
        verdict = self._before_search()
        generation, warnings = self._generation()
        said = read_verdict(verdict, generation, warnings).warnings
        doc = self._texts.load(*self._resolve_path(name, generation, warnings))
        first, last = line_range(start_line, end_line, len(doc.lines), doc.note.path)
        read = NoteRead.of(doc, first, last)  # an empty note: lines 1..0, none
        return evolve(read, warnings=(*said, *read.warnings)) if said else read

    def neighbors(self, identity: object, depth: object = 1, **filters: Any) -> Neighbourhood:
        """Within the same scope a search would run under (status: any by default)."""
        name = clean_text(identity, "identity", MAX_NAME_CHARS)
        hops = bounded_int(depth, "depth", 1, MAX_DEPTH)
        scope = self._graph_scope(filters)
        note = self._in_scope(name, scope)
        graph = self._require_graph()
        kept, left_out = self._fence(scope).neighbors(graph.neighbors(note.memory_id, hops))
        shown = tuple(evolve(n, label=shown_name(n.label)) for n in kept)  # a label is a name
        return Neighbourhood(memory_id=note.memory_id, path=note.path, depth=hops,
                             scope=AppliedScope.of(scope), graph_generation=graph_id(graph),
                             neighbors=redacted(shown), warnings=left_out)

    def path(self, source: object, target: object, **filters: Any) -> RelationPath:
        a_name = clean_text(source, "source", MAX_NAME_CHARS)
        b_name = clean_text(target, "target", MAX_NAME_CHARS)
        scope = self._graph_scope(filters)
        a, b = self._in_scope(a_name, scope), self._in_scope(b_name, scope)
        graph = self._require_graph()
        found, left_out = self._fence(scope).path(graph.path(a.memory_id, b.memory_id))
        return RelationPath(source=NoteRef(memory_id=a.memory_id, path=a.path),
                            target=NoteRef(memory_id=b.memory_id, path=b.path),
                            scope=AppliedScope.of(scope), graph_generation=graph_id(graph),
                            connected=found is not None, path=redacted(found),
                            warnings=left_out)

    def explain(self, query: object, identity: object = None, **filters: Any) -> Explanation:
        request = SearchRequest.parse(query, **filters)
        name = None if identity is None else clean_text(identity, "identity", MAX_NAME_CHARS)
        verdict = self._before_search()
        generation, warnings, (trace, returned) = self._from_one_generation(lambda g, w: (
            g, read_verdict(verdict, g, w).warnings, self.engine.explained(request)))
        known = None
        if name is not None:
            matches = self._catalogue.find(name)
            known = identity_explanation(name, matches[0] if matches else None, trace, returned)
        return explanation(trace, returned, self.engine.config, generation, warnings,
                           request.limit, known)

    # -- writing -------------------------------------------------------------------------

    def refresh(self, mode: object = "index", force: object = False,
                progress: Progress | None = None,
                cancel: CancelToken | None = None) -> RefreshReport:
        """Cancelled (nothing kept, the last good generation serving) when the CancelToken
        `cancel` is set."""
        if not isinstance(mode, str) or mode not in ASKED_MODES:
            raise InvalidRequest(f"mode must be 'index' or 'full', not {mode!r}")
        if not isinstance(force, bool):
            raise InvalidRequest("force must be true or false")
        report = self._indexer.refresh(RefreshMode(mode), force, progress, cancel)
        self._generation()
        return report

    def feedback(self, query: object, memory_id: object, relevance: object,
                 note: object = None) -> FeedbackReceipt:
        query = clean_text(query, "query", MAX_QUERY_CHARS)
        name = clean_text(memory_id, "memory_id", MAX_NAME_CHARS)
        if relevance not in RELEVANCE:
            raise InvalidRequest(f"relevance must be one of {', '.join(RELEVANCE)}, not {relevance!r}")
        text = clean_text(note, "note", MAX_NOTE_CHARS, required=False)
        target = self._resolve_note(name)
        generation, _ = self._generation()
        receipt = FeedbackReceipt(recorded=True, time=self._clock.now_iso(), query=query,
                                  memory_id=target.memory_id, path=target.path,
                                  relevance=relevance, note=text, generation=generation)
        self._feedback.append(asdict(receipt, filter=lambda a, _: a.name != "recorded"))
        return receipt

    def health(self, writes_refused: str | None = None) -> Health:
        return self._health.health(self._generation()[1], writes_refused)

    # -- helpers -------------------------------------------------------------------------

    def _from_one_generation(self, read: Callable[[Generation, list[str]], T]) -> T:
        """Run a read whose every part comes from the generation it is labelled with.

        Another process may publish while the read runs, and the stores switch on their
        next access; a read that saw the generation change is done again (publishes are
        seconds apart, so a second attempt almost always holds still).
        """
        for _ in range(READ_ATTEMPTS):
            with self._index.snapshot() as snapshot:
                generation, warnings = self._generation(snapshot)
                result = read(generation, warnings)
            if self._generation()[0] == generation:
                break
        return result

    def _generation(self, pinned: ReadSnapshot | None = None) -> tuple[Generation, list[str]]:
        """Switch to the newest published generations (the index's pinned one inside a
        snapshot); say what is missing."""
        warnings = []
        index = pinned.generation if pinned is not None else self._index.current()
        building = self._board.read() if self._board is not None and index is None else None
        if building is not None:
            warnings.append(f"{building.describe()}; nothing can be found until it is done")
        elif index is None:
            warnings.append(self._no_index)
        elif index.model_id and index.model_id != self._embedder.model_id:
            warnings.append(Message(
                f"the index's vectors come from {index.model_id} and queries are embedded by "
                f"{self._embedder.model_id}: ", refresh_advice(self._shared),
                " to re-embed (semantic ranks are approximate until then)"))
        graph = self._graph.current() if self._graph else None
        return Generation(index=index.id if index else None,
                          graph=graph.id if graph else None), warnings

    def _resolve_path(self, name: str, generation: Generation,
                      missing: list[str]) -> tuple[str, Note | None]:
        """The path a name reads at, and the index's note there (None: not indexed)."""
        matches = self._catalogue.find(name)
        if len(matches) >= 1:
            return matches[0].path, matches[0]
        if not ("/" in name or "\\" in name or is_markdown(name)):
            # Neither a known id or title nor written as a path: without an index that is
            # no answer about the note (missing says why); with one, the note does not exist
            # (the source would only call it "not a Markdown note").
            raise Unavailable(missing[0]) if generation.index is None else NotFound(no_note(name))
        return name, None  # a path not (yet) indexed: the source validates and reads it

    def _resolve_note(self, name: str) -> Note:
        generation, missing = self._generation()
        matches = self._catalogue.find(name)
        if not matches:
            raise Unavailable(missing[0]) if generation.index is None else NotFound(no_note(name))
        return matches[0]

    def _graph_scope(self, filters: dict[str, Any]) -> ResolvedScope:
        self._generation()
        return self.engine.scope("", scope_filter(**filters, default_status="any"))

    def _in_scope(self, name: str, scope: ResolvedScope) -> Note:
        """The note called `name`, if the scope admits it: a graph answer never leaves it."""
        note = self._resolve_note(name)
        why = outside_scope(note, scope)
        if why:
            raise NotFound(f"{note.path} is {why}: pass repository, project, ticket or "
                           "path_prefix to look there")
        return note

    def _fence(self, scope: ResolvedScope) -> ScopeFence:
        return ScopeFence.around(scope.filter, self._catalogue)

    def _require_graph(self) -> GraphProvider:
        if self._graph is None or self._graph.current() is None:
            raise Unavailable(Message("no graph yet: ", refresh_advice(self._shared, True),
                                      " to build it"))
        return self._graph
