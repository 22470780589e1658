"""StoreGatherer: every read one search makes of the stores, each returning immutable values."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor

from attrs import evolve

from memory.application.search.config import GatherConfig
from memory.domain.candidates import (CandidateLists, Gathered, Hit, Query, best_chunk,
                                      standing_out)
from memory.domain.citing import NoteText
from memory.domain.errors import NotFound
from memory.domain.graph import Neighbor
from memory.domain.linked_notes import HopConfig, Link, ParentLinks
from memory.domain.model_state import EmbedderState, described
from memory.domain.no_answer import mentioned_by
from memory.domain.notes import Chunk, Note
from memory.domain.scope import ScopeFilter, StatusFilter
from memory.ports.embedder import Embedder
from memory.ports.errors import StoreError, Unavailable
from memory.ports.graph_provider import GraphProvider
from memory.ports.lexical_index import LexicalIndex
from memory.ports.note_catalogue import NoteCatalogue
from memory.ports.vector_index import VectorIndex

Embedded = tuple[Sequence[float] | None, str | None]  # the vector, or why there is none


class StoreGatherer:
    """Reads the stores for one search at a time; holds ports only, never a search's data."""

    def __init__(self, lexical: LexicalIndex, catalogue: NoteCatalogue, vectors: VectorIndex,
                 embedder: Embedder, graph: GraphProvider | None):
        self._lexical, self._catalogue = lexical, catalogue
        self._vectors = vectors
        self._embedder = embedder
        self._graph = graph
        # Threads start on the first submit; one is enough, a search embeds one query.
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="query-embed")

    def lists(self, query: Query, cfg: GatherConfig) -> Gathered:
        """The lexical, semantic and graph candidate lists of a query, within its scope."""
        warnings: list[str] = []
        scope = query.scope.filter
        # The model embeds the query on another thread while FTS5 ranks (both release the
        # GIL): on two cores the lexical list costs no wall time.
        vector = self._pool.submit(self._query_vector, query.text, cfg.semantic_wait_s) \
            if cfg.use_semantic else None
        lexical = tuple(self._lexical.search(query.text, scope, cfg.lexical_depth)) \
            if cfg.use_lexical else ()
        semantic = self._semantic(vector, scope, cfg.semantic_depth, warnings)
        lists = CandidateLists(lexical=lexical, semantic=semantic)
        if cfg.use_graph:
            lists = evolve(lists, graph=self._graph_list(lists, query, cfg, warnings))
        return Gathered(query=query, lists=lists, warnings=tuple(warnings))

    def links(self, parents: Sequence[str], query: Query,
              hop: HopConfig) -> tuple[ParentLinks, ...]:
        """For each parent note: its lines and the in-scope notes it links to, with chunks."""
        if self._graph is None:
            return ()
        out = []
        for parent in parents:
            links = []
            for node, line in hop.linked(parent, self._neighbors(parent)):
                note = self._catalogue.note(node)
                if note is None or node in parents or not query.scope.filter.admits(note):
                    continue
                links.append(Link(note=note, line=line, chunks=tuple(self._catalogue.chunks_of(node))))
            out.append(ParentLinks(parent=parent, lines=tuple(self._catalogue.lines(parent)),
                                   links=tuple(links)))
        return tuple(out)

    def chunks(self, memory_ids: Iterable[str]) -> dict[str, tuple[Chunk, ...]]:
        """Every chunk of each note, in note order."""
        return {m: tuple(self._catalogue.chunks_of(m)) for m in memory_ids}

    def still_unknown(self, names: Sequence[str], query: Query) -> tuple[str, ...]:
        """Of query names no candidate mentions, those nothing in scope mentions either,
        whatever its status.

        Status is about when a fact held, not what it is about: a question on how things
        were before Redis is about Redis even when only superseded notes answer it.
        """
        scope = query.scope.filter
        if not names or scope.status is StatusFilter.ANY:
            return tuple(names)
        wider = evolve(scope, status=StatusFilter.ANY)
        return tuple(name for name in names if not mentioned_by(
            self._lexical.search(name, wider, 5), name, query.features))

    def texts(self, memory_ids: Iterable[str]) -> dict[str, NoteText]:
        """The lines of each note (for the expand and redact steps) and where its body starts."""
        out = {}
        for memory_id in dict.fromkeys(memory_ids):
            chunks = self._catalogue.chunks_of(memory_id)
            out[memory_id] = NoteText(lines=tuple(self._catalogue.lines(memory_id)),
                                      body_start=chunks[0].start_line if chunks else 1)
        return out

    # -- the semantic list ----------------------------------------------------------------

    def _query_vector(self, text: str, wait_s: float) -> Embedded:
        state = self._embedder.state()
        if state is EmbedderState.FAILED:
            return None, f"semantic search unavailable: {described(state, self._embedder.failure())}"
        if state is not EmbedderState.READY:
            self._embedder.warm()
            if not self._embedder.wait_ready(wait_s):
                return None, "semantic search skipped: the embedding model is still loading"
        try:
            return self._embedder.embed_query(text), None
        except (Unavailable, StoreError) as exc:
            return None, f"semantic search unavailable: {exc}"

    def _semantic(self, pending: Future[Embedded] | None, scope: ScopeFilter, depth: int,
                  warnings: list[str]) -> tuple[Hit, ...]:
        if pending is None:
            return ()
        vector, why = pending.result()
        if vector is None:
            warnings.append(why or "semantic search unavailable")
            return ()
        try:
            return tuple(self._vectors.search(vector, scope, depth))
        except (Unavailable, StoreError) as exc:
            warnings.append(f"semantic search unavailable: {exc}")
            return ()

    # -- the graph list -------------------------------------------------------------------

    def _graph_list(self, lists: CandidateLists, query: Query, cfg: GatherConfig,
                    warnings: list[str]) -> tuple[Hit, ...]:
        """Notes the query names, then notes close to them and to the best candidates.

        A named note (ticket id, memory_id, path, title) is at distance zero from the
        query, so it heads this list even when no word of it matched.
        """
        scope = query.scope.filter
        named = self._named(query)
        seeds = list(dict.fromkeys(
            [*named, *(h.note.memory_id for h in lists.lexical[: cfg.graph_seeds]),
             *(h.note.memory_id for h in lists.semantic[: cfg.graph_seeds])]))
        admitted = [(note, score) for note, score in self._related(seeds, cfg, warnings)
                    if scope.admits(note)]
        notes = [n for n in self._notes(named) if scope.admits(n)]
        notes += standing_out(admitted, cfg.graph_contrast)
        position = lists.position()
        order: dict[str, Hit] = {}
        for note in notes:
            chunk = best_chunk(self._catalogue.chunks_of(note.memory_id), query.features, position)
            if chunk is not None and chunk.chunk_id not in order:
                order[chunk.chunk_id] = Hit(chunk, note, 0.0)
            if len(order) >= cfg.graph_depth:
                break
        return tuple(order.values())

    def _related(self, seeds: list[str], cfg: GatherConfig,
                 warnings: list[str]) -> list[tuple[Note, float]]:
        if self._graph is None or not seeds:
            return []
        try:
            if self._graph.current() is None:
                warnings.append("graph unavailable: run a full refresh to build it")
                return []
            related = self._graph.related(seeds, cfg.graph_depth * 3)
        except (Unavailable, StoreError) as exc:
            warnings.append(f"graph unavailable: {exc}")
            return []
        return [(note, score) for note, score in
                ((self._catalogue.note(m), score) for m, score in related) if note is not None]

    def _named(self, query: Query) -> list[str]:
        """memory_ids of notes the query names by ticket id, identifier or path."""
        named: list[str] = []
        for ticket in query.scope.query_tickets:
            named += [n.memory_id for n in self._catalogue.find(ticket)]
            named += [n.memory_id for n in self._catalogue.notes(
                ScopeFilter(ticket=ticket, status=StatusFilter.ANY))][:3]
        features = query.features
        for name in (*features.identifiers, *features.paths, *features.phrases):
            named += [n.memory_id for n in self._catalogue.find(name)][:3]
        return list(dict.fromkeys(named))

    def _notes(self, memory_ids: Iterable[str]) -> list[Note]:
        return [n for n in (self._catalogue.note(m) for m in memory_ids) if n is not None]

    def _neighbors(self, memory_id: str) -> list[Neighbor]:
        try:
            return self._graph.neighbors(memory_id, 1) if self._graph is not None else []
        except (Unavailable, StoreError, NotFound):
            return []
