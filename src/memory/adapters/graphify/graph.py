"""GraphifyGraph: the GraphProvider over the published graph, following CURRENT across processes."""

from __future__ import annotations

import gc
import os
import threading
from collections.abc import Sequence
from pathlib import Path

from memory.adapters.graphify.layout import GRAPH_FILE, GraphLayout
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


def _stamp(path: Path) -> tuple | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


class GraphifyGraph(GraphProvider):
    """Loads the current graph lazily; a damaged new one never replaces a good loaded one."""

    def __init__(self, state_dir: str | Path):
        self._layout = GraphLayout.of(state_dir)
        self._snapshot: GraphSnapshot | None = None
        self._seen: tuple | None = ()  # stamps of CURRENT and its graph.json last looked at
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
        """Cheap check (two stats); reload only when CURRENT or the file it names changed."""
        if self._stamps() == self._seen:
            return self._snapshot
        with self._lock:
            if self._stamps() != self._seen:
                self._reload()
                self._seen = self._stamps()
            return self._snapshot

    def _stamps(self) -> tuple:
        loaded = self._snapshot
        graph_file = self._layout.generation(loaded.info.id) / GRAPH_FILE if loaded else None
        return (_stamp(self._layout.pointer), _stamp(graph_file) if graph_file else None)

    def _reload(self) -> None:
        try:
            info = self._layout.read_pointer()
        except FileNotFoundError:
            self._problems = [f"no graph generation published{self._kept()}"]
            return
        except (OSError, ValueError) as e:
            self._problems = [f"graph pointer unreadable: {e}{self._kept()}"]
            return
        path = self._layout.generation(info.id) / GRAPH_FILE
        try:
            self._snapshot = GraphSnapshot.load(info, path)
            self._problems = []
        except (OSError, ValueError) as e:
            self._problems = [f"graph generation {info.id} unreadable: {e}{self._kept()}"]
            return
        settle(self._snapshot.graph.number_of_nodes() >= SETTLE_MIN_NODES)

    def _kept(self) -> str:
        return f"; still serving {self._snapshot.info.id}" if self._snapshot else ""
