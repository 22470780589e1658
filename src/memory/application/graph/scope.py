"""Graph answers within a scope: memory_neighbors and memory_path never show a note outside it."""

from __future__ import annotations

from collections.abc import Sequence

from attrs import frozen

from memory.domain.errors import Unavailable
from memory.domain.graph import GraphPath, Neighbor, Relation
from memory.domain.messages import Action, Message
from memory.domain.notes import Note
from memory.domain.scope import ResolvedScope, ScopeFilter, StatusFilter
from memory.ports.graph_provider import GraphProvider
from memory.ports.note_catalogue import NoteCatalogue

EVERYTHING = ScopeFilter(status=StatusFilter.ANY)


def outside_scope(note: Note, scope: ResolvedScope) -> str | None:
    """Why the scope leaves `note` out (saying where an inferred filter came from), or None."""
    name = scope.filter.excluded_by(note)
    if name is None:
        return None
    origin = dict(scope.inferred).get(name)
    why = scope.filter.exclusion(note)
    return f"{why} (inferred from {origin})" if origin else why


@frozen
class ScopeFence:
    """The notes a scope leaves out, by memory_id and by path: a node of one, or a relation
    written in or leading through one, is outside too."""

    ids: frozenset[str] = frozenset()
    paths: frozenset[str] = frozenset()

    @classmethod
    def around(cls, flt: ScopeFilter, catalogue: NoteCatalogue) -> ScopeFence:
        if flt == EVERYTHING:
            return cls()
        admitted = {n.memory_id for n in catalogue.notes(flt)}  # judged by the store
        outside = [n for n in catalogue.notes(EVERYTHING) if n.memory_id not in admitted]
        return cls(frozenset(n.memory_id for n in outside), frozenset(n.path for n in outside))

    def keeps(self, node: str | None, path: str | None = None) -> bool:
        return node not in self.ids and (path is None or path not in self.paths)

    def _keeps_relation(self, relation: Relation) -> bool:
        return self.keeps(relation.source, relation.source_path) and self.keeps(relation.target)

    def neighbors(self, found: Sequence[Neighbor]) -> tuple[tuple[Neighbor, ...], tuple[str, ...]]:
        """The neighbours inside, and a warning saying how many were left out."""
        kept = tuple(n for n in found if self.keeps(n.node, n.path)
                     and all(map(self._keeps_relation, n.via)))
        left = len(found) - len(kept)
        return kept, ((f"{left} related nodes outside the scope are left out; widen the scope "
                       "(repository, project, ticket, path_prefix, status) to see them",)
                      if left else ())

    def path(self, found: GraphPath | None) -> tuple[GraphPath | None, tuple[str, ...]]:
        """The path if it stays inside, else None and a warning."""
        if found is None or (all(self.keeps(n.get("node"), n.get("path")) for n in found.nodes)
                             and all(map(self._keeps_relation, found.hops))):
            return found, ()
        return None, ("the shortest path between them runs through notes outside the scope; "
                      "widen the scope to see it",)


def graph_id(graph: GraphProvider) -> str:
    """The id of the graph generation that answers; Unavailable while none is published."""
    current = graph.current()
    if current is None:
        raise Unavailable(Message("no graph yet: run ", Action.REFRESH_FULL, " to build it"))
    return current.id
