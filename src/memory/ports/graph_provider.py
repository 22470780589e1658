"""GraphProvider: relationship signals, neighbours and paths from the current graph."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from memory.domain.graph import GraphPath, Neighbor
from memory.domain.refresh import GenerationInfo


@runtime_checkable
class GraphProvider(Protocol):
    def current(self) -> GenerationInfo | None:
        """The published graph generation, switching if another process published."""

    def related(self, seeds: Sequence[str], limit: int) -> list[tuple[str, float]]:
        """Notes (memory_ids) close to the seed notes, best first, with a proximity score."""

    def neighbors(self, memory_id: str, depth: int) -> list[Neighbor]:
        """Nodes within depth hops of a note, with the relations that reach them."""

    def path(self, source: str, target: str) -> GraphPath | None:
        """Shortest relationship path between two notes, or None when unconnected."""
