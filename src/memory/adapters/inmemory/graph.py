"""InMemoryGraph: an adjacency-dict graph of notes built from their links and fields."""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence

from attrs import evolve

from memory.domain.cancellation import CancelToken
from memory.domain.errors import NotFound, Unavailable
from memory.domain.identity import assign_identities
from memory.domain.graph import GraphPath, Neighbor, Relation
from memory.domain.notes import NoteDocument, without_extension
from memory.domain.refresh import GenerationInfo
from memory.ports.graph_generations import GraphFacts, GraphGenerations, GraphStage
from memory.ports.graph_provider import GraphProvider


# Where two notes are tied by several relations, the strongest names the hop (as in Graphify).
_STRENGTH = {"supersedes": 1.0, "superseded_by": 1.0, "related": 1.0, "references": 0.8,
             "ticket": 0.6, "repository": 0.3}
NOTHING_PUBLISHED = "no graph generation published"


def _edges(docs: Sequence[NoteDocument]) -> list[Relation]:
    by_name: dict[str, str] = {}
    for d in docs:
        for name in d.note.names:
            by_name.setdefault(name.lower(), d.note.memory_id)
    out = []
    for d in docs:
        n = d.note
        for relation, targets in (("references", n.links), ("related", n.related),
                                  ("supersedes", n.supersedes),
                                  ("superseded_by", n.superseded_by)):
            for t in targets:
                target = by_name.get(t.lower()) or by_name.get(without_extension(t).lower())
                if target and target != n.memory_id:
                    out.append(Relation(source=n.memory_id, target=target, relation=relation,
                                        source_path=n.path))
        for repo in n.repositories:
            out.append(Relation(source=n.memory_id, target=f"repository:{repo}", relation="repository"))
        if n.ticket:
            out.append(Relation(source=n.memory_id, target=f"ticket:{n.ticket}", relation="ticket"))
    return out


class _Stage(GraphStage):
    def __init__(self, owner: InMemoryGraph, gen_id: str, docs: Sequence[NoteDocument]):
        ids = assign_identities(d.note for d in docs)  # contested ids go where the index's go
        docs = [evolve(d, note=evolve(d.note, memory_id=ids[d.note.path])) for d in docs]
        self._owner, self._id, self._docs = owner, gen_id, docs
        self.edges = _edges(docs)

    @property
    def id(self) -> str:
        return self._id

    def facts(self) -> GraphFacts:
        ids = {d.note.memory_id for d in self._docs}
        extra = {e.target for e in self.edges if e.target not in ids}
        return GraphFacts(nodes=len(ids) + len(extra), edges=len(self.edges),
                          page_notes=frozenset(ids), dangling_edges=0)

    def publish(self) -> GenerationInfo:
        self._owner.install(self._id, self._docs, self.edges)
        return self._owner.current()

    def discard(self) -> None:
        return None


class InMemoryGraph(GraphProvider, GraphGenerations):
    def __init__(self):
        self._id: str | None = None
        self._adj: dict[str, list[tuple[str, Relation]]] = {}
        self._paths: dict[str, str] = {}
        self._sources: dict[str, str] = {}
        self._count = 0
        self.fail_next_build = False

    def install(self, gen_id: str, docs, edges: list[Relation]) -> None:
        self._id = gen_id
        self._sources = {d.note.path: d.note.content_hash for d in docs}
        self._paths = {d.note.memory_id: d.note.path for d in docs}
        self._adj = {mid: [] for mid in self._paths}
        for e in edges:
            self._adj.setdefault(e.source, []).append((e.target, e))
            self._adj.setdefault(e.target, []).append((e.source, e))
        for hops in self._adj.values():
            hops.sort(key=lambda hop: -_STRENGTH.get(hop[1].relation, 0.4))

    @property
    def paths(self) -> dict[str, str]:
        """memory_id -> path of every note page published, for tests to read."""
        return dict(self._paths)

    def current(self) -> GenerationInfo | None:
        if self._id is None:
            return None
        return GenerationInfo(id=self._id, created="", notes=len(self._paths),
                              nodes=len(self._adj), edges=sum(map(len, self._adj.values())) // 2)

    def build(self, documents: Sequence[NoteDocument],
              cancel: CancelToken | None = None) -> GraphStage:
        if cancel is not None:
            cancel.raise_if_cancelled()
        self._count += 1
        stage = _Stage(self, f"graph-{self._count:04d}", documents)
        if self.fail_next_build:
            self.fail_next_build = False
            stage.edges.append(Relation(source="x", target="y", relation="broken"))
            stage.facts = lambda: GraphFacts(nodes=0, edges=0, page_notes=frozenset(),
                                             dangling_edges=1)
        return stage

    def current_sources(self) -> Mapping[str, str] | None:
        return dict(self._sources) if self._id is not None else None

    def collect(self, keep: int, grace_seconds: float) -> list[str]:
        return []

    def check_current(self) -> list[str]:
        return [] if self._id is not None else [NOTHING_PUBLISHED]

    def problems(self) -> list[str]:
        return [] if self._id is not None else [NOTHING_PUBLISHED]

    def _known(self, memory_id: str) -> None:
        if self._id is None:
            raise Unavailable(f"graph unavailable: {NOTHING_PUBLISHED}; run a full refresh")
        if memory_id not in self._paths:
            raise NotFound(f"note {memory_id!r} is not in graph generation {self._id}")

    def related(self, seeds: Sequence[str], limit: int) -> list[tuple[str, float]]:
        scores: dict[str, float] = {}
        for rank, seed in enumerate(seeds):
            weight = 1.0 / (1 + rank)
            seen = {seed}
            frontier = deque([(seed, 0)])
            while frontier:
                node, depth = frontier.popleft()
                if depth == 2:
                    continue
                neighbours = self._adj.get(node, [])
                for other, _ in neighbours:
                    if other in seen:
                        continue
                    seen.add(other)
                    damp = 1.0 / max(1, len(self._adj.get(other, [])) ** 0.5)
                    if other in self._paths:
                        scores[other] = scores.get(other, 0.0) + weight / (depth + 1)
                    frontier.append((other, depth + 1)) if damp > 0.1 else None
        ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
        return [(m, s) for m, s in ranked if m not in seeds][:limit]

    def neighbors(self, memory_id: str, depth: int) -> list[Neighbor]:
        self._known(memory_id)
        out, seen = [], {memory_id}
        frontier = deque([(memory_id, 0, ())])
        while frontier:
            node, d, via = frontier.popleft()
            if d == depth:
                continue
            for other, rel in self._adj.get(node, []):
                if other in seen:
                    continue
                seen.add(other)
                path = (*via, rel)
                kind = "note" if other in self._paths else other.split(":", 1)[0]
                out.append(Neighbor(node=other, label=other, kind=kind,
                                    path=self._paths.get(other), depth=d + 1, via=path))
                frontier.append((other, d + 1, path))
        return out

    def path(self, source: str, target: str) -> GraphPath | None:
        self._known(source)
        self._known(target)
        prev: dict[str, tuple[str, Relation] | None] = {source: None}
        frontier = deque([source])
        while frontier:
            node = frontier.popleft()
            if node == target:
                hops = []
                while prev[node] is not None:
                    node, rel = prev[node][0], prev[node][1]
                    hops.append(rel)
                return GraphPath(source=source, target=target, hops=tuple(reversed(hops)))
            for other, rel in self._adj.get(node, []):
                if other not in prev:
                    prev[other] = (node, rel)
                    frontier.append(other)
        return None
