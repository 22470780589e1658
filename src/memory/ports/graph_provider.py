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
        """Notes (memory_ids) close to the seed notes, best first, with a proximity score.

        The seeds themselves are not listed: the graph signal adds what the seeds lead to.
        """

    def neighbors(self, memory_id: str, depth: int) -> list[Neighbor]:
        """Nodes within depth hops of a note, with the relations that reach them.

        NotFound for an unknown memory_id; Unavailable when no graph is published.
        """

    def path(self, source: str, target: str) -> GraphPath | None:
        """Shortest relationship path between two notes, or None when unconnected."""

    def problems(self) -> list[str]:
        """What is wrong with the graph being served (damaged newer file, none at all)."""
