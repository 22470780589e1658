"""StoredGraphGenerations: graphs built by Graphify here, published into a shared document store.

The indexer host builds (Graphify needs the notes and a scratch folder); the store (e.g. the
Postgres database) keeps each published document and the pointer, so a server on another
host reads the graph with no state folder of its own.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence

from memory.adapters.graphify.documents import GraphDocumentStore
from memory.adapters.graphify.generations import (GraphifyGenerations, GraphifyStage,
                                                  facts_of, facts_problems)
from memory.adapters.graphify.layout import GRAPH_FILE, parse_graph_data
from memory.domain.cancellation import CancelToken
from memory.domain.notes import NoteDocument
from memory.domain.refresh import GenerationInfo
from memory.ports.errors import StoreError
from memory.ports.graph_generations import GraphFacts, GraphGenerations, GraphStage


class StoredGraphStage(GraphStage):
    """A graph built in the local staging folder, published by handing its document over."""

    def __init__(self, built: GraphifyStage, store: GraphDocumentStore):
        self._built, self._store = built, store
        self._done = False

    @property
    def id(self) -> str:
        return self._built.id

    def facts(self) -> GraphFacts:
        return self._built.facts()

    def publish(self) -> GenerationInfo:
        if self._done:
            raise StoreError(f"graph stage {self.id} was already published or discarded")
        info = self._built.info()
        try:
            document = self._built.graph_file.read_bytes()
        except OSError as e:
            raise StoreError(f"staged graph {self.id} is unreadable: {e}") from e
        self._store.publish(info, document, self._built.sources())
        self._done = True
        self._built.discard()  # the store holds it now; the staging folder goes
        return info

    def discard(self) -> None:
        self._done = True
        self._built.discard()


class StoredGraphGenerations(GraphGenerations):
    """GraphGenerations whose published graphs live in a GraphDocumentStore."""

    def __init__(self, builder: GraphifyGenerations, store: GraphDocumentStore):
        self._builder, self._store = builder, store
        self._sources: tuple[str, Mapping[str, str] | None] | None = None  # (generation, map)
        self._lock = threading.Lock()

    def build(self, documents: Sequence[NoteDocument],
              cancel: CancelToken | None = None) -> GraphStage:
        return StoredGraphStage(self._builder.build(documents, cancel), self._store)

    def current(self) -> GenerationInfo | None:
        try:
            return self._store.current()
        except (OSError, ValueError):
            return None

    def current_sources(self) -> Mapping[str, str] | None:
        current = self.current()
        if current is None:
            return None
        with self._lock:
            if self._sources is None or self._sources[0] != current.id:
                self._sources = (current.id, self._store.sources(current.id))
            return self._sources[1]

    def collect(self, keep: int, grace_seconds: float) -> list[str]:
        """Old generations in the store, and stale stages in the local staging folder."""
        return [*self._store.collect(keep, grace_seconds),
                *self._builder.collect(keep, grace_seconds)]

    def check_current(self) -> list[str]:
        try:
            info = self._store.current()
        except (OSError, ValueError) as e:
            return [f"graph pointer unreadable: {e}"]
        if info is None:
            return ["no graph generation published"]
        try:
            facts = facts_of(parse_graph_data(self._store.document(info.id), GRAPH_FILE))
        except (OSError, ValueError) as e:
            return [f"current graph generation {info.id} is unreadable: {e}"]
        return facts_problems(facts, info)
