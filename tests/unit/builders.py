"""Builds parsed notes and a wired in-memory service for unit tests (no disk)."""

from __future__ import annotations

from attrs import evolve

from memory.adapters.inmemory import (DeterministicEmbedder, FixedClock, InMemoryChunkStore,
                                      InMemoryEmbeddingCache, InMemoryFeedbackLog,
                                      InMemoryGenerations, InMemoryGraph, InMemoryIndex,
                                      InMemoryLock, InMemoryNoteSource, InMemoryRefreshHistory,
                                      InMemoryVectorIndex)
from memory.application.refresh.indexer import Indexer
from memory.application.search.retrieval import RetrievalEngine, SearchConfig
from memory.application.search.scope_names import CatalogueScopeNames
from memory.application.service import MemoryService
from memory.domain.chunking import chunk_lines
from memory.domain.health import WriteAccess
from memory.domain.identity import path_identity
from memory.domain.markdown import links
from memory.domain.note_scope import scope_from_path
from memory.domain.notes import Note, NoteDocument, Status, content_hash


def make_doc(path: str, body: str, *, title: str | None = None, memory_id: str | None = None,
             status: str = "active", window: int = 8, overlap: int = 2, **fields) -> NoteDocument:
    lines = tuple(body.split("\n"))
    scope = scope_from_path(path)
    mid = memory_id or path_identity(path)
    title = title or path.rsplit("/", 1)[-1].removesuffix(".md")
    note = Note(memory_id=mid, path=path, title=title, status=Status.parse(status),
                repository=fields.pop("repository", scope.repository),
                project=fields.pop("project", scope.project),
                ticket=fields.pop("ticket", scope.ticket),
                scope_kind=scope.kind, scope_id=scope.id,
                links=tuple(link.target for link in links(lines)),
                content_hash=content_hash(body),
                line_count=len(lines), **fields)
    chunks = chunk_lines(lines, memory_id=mid, path=path, title=title, window=window,
                         overlap=overlap)
    return NoteDocument(note=note, chunks=chunks, lines=lines)


def edit(doc: NoteDocument, body: str) -> NoteDocument:
    fresh = make_doc(doc.note.path, body, title=doc.note.title, memory_id=doc.note.memory_id)
    return evolve(fresh, note=evolve(doc.note, content_hash=fresh.note.content_hash,
                                     line_count=fresh.note.line_count))


class World:
    """A MemoryService over in-memory adapters, with handles on each fake."""

    def __init__(self, docs=(), config: SearchConfig | None = None, default_repository=None,
                 embedder: DeterministicEmbedder | None = None):
        self.source = InMemoryNoteSource(docs)
        self.index = InMemoryIndex()
        self.generations = InMemoryGenerations(self.index)
        self.chunks = InMemoryChunkStore(self.index)
        self.vectors = InMemoryVectorIndex(self.index)
        self.embedder = embedder or DeterministicEmbedder()
        self.graph = InMemoryGraph()
        self.cache = InMemoryEmbeddingCache()
        self.history = InMemoryRefreshHistory()
        self.feedback = InMemoryFeedbackLog()
        self.clock = FixedClock()
        self.lock = InMemoryLock()
        self.engine = RetrievalEngine(self.chunks, self.chunks, self.vectors, self.embedder,
                                      self.graph, config, default_repository=default_repository,
                                      today=lambda: self.clock.now_iso()[:10],
                                      scope_names=CatalogueScopeNames(catalogue=self.chunks,
                                                                      index=self.generations))
        self.indexer = Indexer(self.source, self.generations, self.embedder, self.cache,
                               self.lock, self.clock, self.history, self.graph)
        self.service = MemoryService(
            engine=self.engine, indexer=self.indexer, source=self.source,
            lexical=self.chunks, catalogue=self.chunks, index=self.generations, graph=self.graph,
            graphs=self.graph, embedder=self.embedder, feedback=self.feedback,
            history=self.history, clock=self.clock)

    def refresh(self, mode: str = "full"):
        return self.service.refresh(mode)

    def reader(self, source: InMemoryNoteSource | None = None) -> MemoryService:
        """A server reading this world's published index from another root (empty unless
        given), with a journal of its own: serve --read-only --store on a host without the
        notes."""
        return MemoryService(
            engine=self.engine, indexer=self.indexer, source=source or InMemoryNoteSource(),
            lexical=self.chunks, catalogue=self.chunks, index=self.generations,
            graph=self.graph, graphs=self.graph, embedder=self.embedder, feedback=self.feedback,
            history=InMemoryRefreshHistory(), clock=self.clock,
            writes=WriteAccess.served(read_only=True, git_commit=False), shared_index=True)
