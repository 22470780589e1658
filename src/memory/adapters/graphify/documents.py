"""GraphDocuments: where the published graph documents are read from (files or database rows).

A graph generation is one node-link document plus a pointer naming the current one. The
state folder keeps them as files (GraphFiles); a store shared by many servers keeps them as
rows (the Postgres store implements this protocol without importing Graphify).
"""

from __future__ import annotations

import json
import os
from collections.abc import Hashable, Mapping
from pathlib import Path
from typing import Protocol, runtime_checkable

from attrs import frozen

from memory.adapters.graphify.layout import GRAPH_FILE, GraphLayout
from memory.domain.refresh import GenerationInfo

SOURCES_FILE = "sources.json"  # path -> content hash of the notes a graph was built from


@runtime_checkable
class GraphDocuments(Protocol):
    def stamp(self, loaded: str | None) -> Hashable:
        """Cheap; differs whenever current(), or the document of the generation `loaded`,
        would read differently than when it was last taken."""

    def current(self) -> GenerationInfo | None:
        """The published graph generation; None when none is; ValueError or OSError when
        the pointer is damaged."""

    def document(self, generation: str) -> bytes:
        """The node-link document of a published generation, as written; ValueError or
        OSError when it is missing or damaged."""

    def sources(self, generation: str) -> Mapping[str, str] | None:
        """Path -> content hash of the notes the generation was built from; None when it
        did not record them or cannot be read."""


@runtime_checkable
class GraphDocumentStore(GraphDocuments, Protocol):
    def publish(self, info: GenerationInfo, document: bytes,
                sources: Mapping[str, str]) -> None:
        """Keep the document and make it current in one step; StoreError (nothing changed)
        when it cannot."""

    def collect(self, keep: int, grace_seconds: float) -> list[str]:
        """Delete superseded generations beyond the `keep` newest, once grace_seconds old."""


@frozen
class GraphFiles(GraphDocuments):
    """The graph part of a state folder: `graph/CURRENT` and `graph/gen-<id>/graph.json`."""

    layout: GraphLayout

    @classmethod
    def of(cls, state_dir: str | Path) -> GraphFiles:
        return cls(GraphLayout.of(state_dir))

    def stamp(self, loaded: str | None) -> Hashable:
        graph_file = self.layout.generation(loaded) / GRAPH_FILE if loaded else None
        return (_stamp(self.layout.pointer), _stamp(graph_file) if graph_file else None)

    def current(self) -> GenerationInfo | None:
        try:
            return self.layout.read_pointer()
        except FileNotFoundError:
            return None

    def document(self, generation: str) -> bytes:
        return (self.layout.generation(generation) / GRAPH_FILE).read_bytes()

    def sources(self, generation: str) -> Mapping[str, str] | None:
        return read_sources(self.layout.generation(generation))


def documents_at(where: GraphDocuments | str | os.PathLike) -> GraphDocuments:
    """`where` itself, or the graph files of the state folder it names."""
    return GraphFiles.of(where) if isinstance(where, (str, os.PathLike)) else where


def read_sources(folder: Path) -> Mapping[str, str] | None:
    """What the graph in a generation (or stage) folder was built from; None for one built
    before this was recorded."""
    try:
        data = json.loads((folder / SOURCES_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    return {str(p): str(h) for p, h in data.items()}


def _stamp(path: Path) -> tuple | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)
