"""GraphifyGraph: the GraphProvider over the published graph, following the current pointer."""

from __future__ import annotations

import gc
import os
import threading
from collections.abc import Hashable, Sequence

from memory.adapters.graphify.documents import GraphDocuments, documents_at
from memory.adapters.graphify.layout import GRAPH_FILE
from memory.adapters.graphify.snapshot import GraphSnapshot
from memory.domain.errors import Unavailable
from memory.domain.graph import GraphPath, Neighbor
from memory.domain.refresh import GenerationInfo
from memory.ports.graph_provider import GraphProvider


# From this many nodes on, a loaded graph is kept out of the garbage collector's passes.
SETTLE_MIN_NODES = 5000


def settle(big: bool) -> None:
    """After a graph (re)load: collect what the last one left, then freeze what is alive.

    A graph of 10k notes is most of the ~390k objects the collector tracks, alive until
    the next full refresh, and every full collection walked them (0.2-0.3 s, a pause that
    lands on whatever refresh or search allocated last). Frozen objects are skipped by
    those passes. A networkx graph holds reference cycles, so a frozen one would never be
    freed: the old graph is collected (one full pass per reload) before the new one is
    frozen.
    """
    if not big and not gc.get_freeze_count():
        return
    gc.unfreeze()
    gc.collect()
    if big:
        gc.freeze()


class GraphifyGraph(GraphProvider):
    """Loads the current graph lazily; a damaged new one never replaces a good loaded one."""

    def __init__(self, documents: GraphDocuments | str | os.PathLike):
        """`documents`: where the published graphs are, or a state folder holding them."""
        self._documents = documents_at(documents)
        self._snapshot: GraphSnapshot | None = None
        self._seen: Hashable = object()  # the documents' stamp when last looked at
        self._problems: list[str] = []
        self._lock = threading.Lock()

    def current(self) -> GenerationInfo | None:
        snapshot = self._refresh()
        return snapshot.info if snapshot else None

    def problems(self) -> list[str]:
        """Why the current graph could not be (re)loaded; empty when what is served is current."""
        self._refresh()
        return list(self._problems)

    def related(self, seeds: Sequence[str], limit: int) -> list[tuple[str, float]]:
        snapshot = self._refresh()
        if snapshot is None:
            return []
        seen = set(seeds)
        ranked = snapshot.related(seeds, limit + len(seen))
        return [(m, s) for m, s in ranked if m not in seen][:limit]

    def neighbors(self, memory_id: str, depth: int) -> list[Neighbor]:
        return self._required().neighbors(memory_id, depth)

    def path(self, source: str, target: str) -> GraphPath | None:
        return self._required().path(source, target)

    def _required(self) -> GraphSnapshot:
        snapshot = self._refresh()
        if snapshot is None:
            detail = "; ".join(self._problems) or "no graph generation published"
            raise Unavailable(f"graph unavailable: {detail}; run a full refresh")
        return snapshot

    def _refresh(self) -> GraphSnapshot | None:
        """Cheap check (the documents' stamp); reload only when the pointer or the document
        it names changed."""
        if self._stamp() == self._seen:
            return self._snapshot
        with self._lock:
            stamp = self._stamp()
            if stamp != self._seen:
                self._reload()
                self._seen = self._stamp()
            return self._snapshot

    def _stamp(self) -> Hashable:
        return self._documents.stamp(self._snapshot.info.id if self._snapshot else None)

    def _reload(self) -> None:
        try:
            info = self._documents.current()
        except (OSError, ValueError) as e:
            self._problems = [f"graph pointer unreadable: {e}{self._kept()}"]
            return
        if info is None:
            self._problems = [f"no graph generation published{self._kept()}"]
            return
        try:
            self._snapshot = GraphSnapshot.parse(info, self._documents.document(info.id),
                                                 GRAPH_FILE)
            self._problems = []
        except (OSError, ValueError) as e:
            self._problems = [f"graph generation {info.id} unreadable: {e}{self._kept()}"]
            return
        settle(self._snapshot.graph.number_of_nodes() >= SETTLE_MIN_NODES)

    def _kept(self) -> str:
        return f"; still serving {self._snapshot.info.id}" if self._snapshot else ""
