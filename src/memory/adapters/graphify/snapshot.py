"""GraphSnapshot: one loaded graph generation, headings folded into their notes, ready to query."""

from __future__ import annotations

import math
import re
from collections import deque
from collections.abc import Sequence
from pathlib import Path

import networkx as nx
import numpy as np
from networkx.readwrite import json_graph
from scipy import sparse

from memory.adapters.graphify.layout import parse_graph_data
from memory.domain.errors import NotFound
from memory.domain.graph import GraphPath, Neighbor, Relation
from memory.domain.refresh import GenerationInfo

# How strongly one relation ties its two ends; hubs are damped separately, by degree.
RELATION_WEIGHTS = {"supersedes": 1.0, "superseded_by": 1.0, "related": 1.0, "references": 0.8,
                    "ticket": 0.6, "mentions": 0.4, "repository": 0.3, "project": 0.3,
                    "tagged": 0.3, "contains": 0.3}
_OTHER_WEIGHT = 0.4
_HOPS = 3  # proximity looks at most this many hops away
_DECAY = 0.5  # each further hop counts half as much
_LINE = re.compile(r"L(\d+)")

_Edge = tuple[str, str, dict]  # (source node, target node, attributes) as stored


def _weight(data: dict) -> float:
    return RELATION_WEIGHTS.get(data.get("relation", ""), _OTHER_WEIGHT)


class GraphSnapshot:
    """A published graph.json as a networkx DiGraph plus a note-level (unit) view of it.

    A unit is a note (its page node and every heading of the same file) or any other node.
    """

    def __init__(self, info: GenerationInfo, graph: nx.DiGraph):
        self.info = info
        self.graph = graph
        self._page_of: dict[str, str] = {}
        self._note_of: dict[str, str] = {}
        for node, data in graph.nodes(data=True):
            if data.get("node_kind") == "page" and data.get("memory_id"):
                self._page_of.setdefault(data["memory_id"], node)
                self._note_of[node] = data["memory_id"]
        self._unit = self._fold_headings()
        self._pairs: dict[tuple[str, str], list[_Edge]] = {}
        for u, v, data in graph.edges(data=True):
            a, b = self._unit[u], self._unit[v]
            if a != b:
                self._pairs.setdefault((min(a, b), max(a, b)), []).append((u, v, data))
        self._adj: dict[str, list[tuple[str, float]]] = {}
        for (a, b), edges in self._pairs.items():
            w = min(2.0, sum(_weight(d) for _, _, d in edges))
            self._adj.setdefault(a, []).append((b, w))
            self._adj.setdefault(b, []).append((a, w))
        for hops in self._adj.values():
            hops.sort(key=lambda h: (-h[1], h[0]))
        self._prepare_propagation()

    @classmethod
    def load(cls, info: GenerationInfo, path: Path) -> GraphSnapshot:
        """Read graph.json; OSError or ValueError when it is missing or not a graph."""
        return cls.parse(info, path.read_bytes(), path.name)

    @classmethod
    def parse(cls, info: GenerationInfo, raw: bytes, name: str) -> GraphSnapshot:
        """A graph document as stored; ValueError when it is not a graph (`name` says
        which document in the message)."""
        data = parse_graph_data(raw, name)
        try:
            graph = json_graph.node_link_graph(data, edges="links")
        except (KeyError, TypeError, nx.NetworkXError) as e:
            raise ValueError(f"{name} is not a node-link graph: {e}") from e
        if graph.is_multigraph() or not graph.is_directed():
            graph = nx.DiGraph(graph)
        try:
            return cls(info, graph)
        except (KeyError, TypeError, AttributeError) as e:
            raise ValueError(f"{name} has malformed nodes or edges: {e!r}") from e

    @property
    def memory_ids(self) -> frozenset[str]:
        return frozenset(self._page_of)

    def _fold_headings(self) -> dict[str, str]:
        page_by_path = {str(self.graph.nodes[p].get("path", "")): p for p in self._note_of}
        unit = {}
        for node, data in self.graph.nodes(data=True):
            owner = None
            if node not in self._note_of and data.get("node_kind") == "heading":
                owner = page_by_path.get(str(data.get("source_file") or "").replace("\\", "/"))
            unit[node] = owner or node
        return unit

    def _prepare_propagation(self) -> None:
        units = sorted(self._adj)
        self._index = {u: i for i, u in enumerate(units)}
        degree = np.array([sum(w for _, w in self._adj[u]) for u in units], dtype=float)
        src, dst, val = [], [], []
        for u in units:
            i = self._index[u]
            for other, w in self._adj[u]:
                j = self._index[other]
                src.append(i)
                dst.append(j)
                val.append(w / math.sqrt(degree[i] * degree[j]))
        # One hop of propagation is one sparse product: mass' = P @ mass, P[dst, src] = val.
        self._step = sparse.csr_matrix((np.array(val, dtype=float),
                                        (np.array(dst, dtype=np.int64),
                                         np.array(src, dtype=np.int64))),
                                       shape=(len(units), len(units)))
        notes = [(self._index[p], m) for p, m in self._note_of.items() if p in self._index]
        self._note_rows = np.array([i for i, _ in notes], dtype=np.int64)
        self._note_ids = [m for _, m in notes]

    def related(self, seeds: Sequence[str], limit: int) -> list[tuple[str, float]]:
        """Truncated personalized propagation (3 hops, halving) over the unit graph.

        Symmetric degree normalization damps hubs: a repository tying hundreds of notes
        passes each of them very little.
        """
        rows = [self._index[self._page_of[s]] for s in dict.fromkeys(seeds)
                if s in self._page_of and self._page_of[s] in self._index]
        if limit <= 0 or not rows or not len(self._note_rows):
            return []
        mass = np.zeros(len(self._index))
        for rank, row in enumerate(rows):
            mass[row] += 1.0 / (1.0 + 0.1 * rank)
        total = np.zeros_like(mass)
        for hop in range(_HOPS):
            mass = self._step @ mass
            total += (_DECAY ** hop) * mass
        scores = total[self._note_rows]
        hits = np.flatnonzero(scores > 1e-12)
        if len(hits) > 2 * limit:
            hits = hits[np.argpartition(-scores[hits], 2 * limit - 1)[: 2 * limit]]
        ranked = sorted(((self._note_ids[i], float(scores[i])) for i in hits),
                        key=lambda kv: (-kv[1], kv[0]))
        return ranked[:limit]

    def neighbors(self, memory_id: str, depth: int) -> list[Neighbor]:
        start = self._page(memory_id)
        parent, strength, found = self._walk(start, depth)
        out = []
        for unit, hops in found:
            out.append((hops, -strength[unit], Neighbor(
                node=self._name(unit), label=self._label(unit), kind=self._kind(unit),
                path=self._path_of(unit), depth=hops, via=self._via(unit, parent))))
        out.sort(key=lambda t: (t[0], t[1], t[2].label.lower(), t[2].node))
        return [n for _, _, n in out]

    def path(self, source: str, target: str) -> GraphPath | None:
        start, goal = self._page(source), self._page(target)
        parent, _, _ = self._walk(start, math.inf, goal)
        if goal not in parent:
            return None
        chain = [goal]
        while parent[chain[-1]] is not None:
            chain.append(parent[chain[-1]])
        chain.reverse()
        nodes = tuple({"node": self._name(u), "label": self._label(u), "kind": self._kind(u),
                       "path": self._path_of(u)} for u in chain)
        return GraphPath(source=source, target=target, hops=self._via(goal, parent), nodes=nodes)

    def _walk(self, start: str, depth: float, goal: str | None = None):
        """Breadth-first over units, strongest ties first; (parent, strength, [(unit, hops)])."""
        parent: dict[str, str | None] = {start: None}
        strength = {start: 1.0}
        found: list[tuple[str, int]] = []
        queue = deque([(start, 0)])
        while queue:
            unit, hops = queue.popleft()
            if unit == goal or hops >= depth:
                continue
            fan = len(self._adj.get(unit, ())) if unit != start else 1
            for other, w in self._adj.get(unit, ()):
                if other in parent:
                    continue
                parent[other] = unit
                strength[other] = strength[unit] * w / math.sqrt(max(1, fan))
                found.append((other, hops + 1))
                if other == goal:
                    return parent, strength, found
                queue.append((other, hops + 1))
        return parent, strength, found

    def _via(self, unit: str, parent: dict[str, str | None]) -> tuple[Relation, ...]:
        hops = []
        while parent.get(unit) is not None:
            prev = parent[unit]
            hops.append(self._relation(prev, unit))
            unit = prev
        return tuple(reversed(hops))

    def _relation(self, a: str, b: str) -> Relation:
        """The strongest stored edge between two units, in its stored direction."""
        u, v, data = max(self._pairs[(min(a, b), max(a, b))],
                         key=lambda e: (_weight(e[2]), e[2].get("relation", "")))
        match = _LINE.match(str(data.get("source_location") or ""))
        return Relation(source=self._name(self._unit[u]), target=self._name(self._unit[v]),
                        relation=str(data.get("relation") or "related"),
                        source_path=(data.get("source_file") or None),
                        source_line=int(match.group(1)) if match else None)

    def _page(self, memory_id: str) -> str:
        page = self._page_of.get(memory_id)
        if page is None:
            raise NotFound(f"note {memory_id!r} is not in graph generation {self.info.id}")
        return page

    def _name(self, unit: str) -> str:
        return self._note_of.get(unit, unit)

    def _label(self, unit: str) -> str:
        data = self.graph.nodes[unit]
        return str(data.get("title") or data.get("label") or unit)

    def _kind(self, unit: str) -> str:
        if unit in self._note_of:
            return "note"
        data = self.graph.nodes[unit]
        if data.get("file_type") == "code":
            return "code"
        return str(data.get("node_kind") or data.get("file_type") or "concept")

    def _path_of(self, unit: str) -> str | None:
        data = self.graph.nodes[unit]
        path = data.get("path") or data.get("source_file")
        return str(path).replace("\\", "/") if path else None
