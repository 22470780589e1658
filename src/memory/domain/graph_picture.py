"""A picture of the graph: its nodes and edges as plain values, cut down to a scope."""

from __future__ import annotations

from attrs import evolve, frozen

from memory.domain.secrets import redact_text

NOTE = "note"


@frozen(kw_only=True)
class PictureNode:
    """A note (headings folded into it) or what notes share: repository, ticket, tag, ..."""

    id: str
    label: str
    kind: str  # note | repository | project | ticket | tag | heading | code | concept ...
    memory_id: str | None = None
    path: str | None = None


@frozen(kw_only=True)
class PictureEdge:
    source: str
    target: str
    relation: str


@frozen(kw_only=True)
class GraphPicture:
    generation: str
    nodes: tuple[PictureNode, ...]
    edges: tuple[PictureEdge, ...]
    warnings: tuple[str, ...] = ()  # what the reader must know: an empty scope, a stale graph

    @property
    def notes(self) -> tuple[PictureNode, ...]:
        return tuple(n for n in self.nodes if n.kind == NOTE)

    def restricted_to(self, memory_ids: frozenset[str]) -> GraphPicture:
        """Only these notes, and the other nodes that touch at least one of them."""
        kept = {n.id for n in self.nodes if n.kind == NOTE and n.memory_id in memory_ids}
        touching = {end for e in self.edges for a, end in ((e.source, e.target),
                                                          (e.target, e.source)) if a in kept}
        by_id = {n.id: n for n in self.nodes}
        kept |= {i for i in touching if by_id.get(i) is not None and by_id[i].kind != NOTE}
        return evolve(self, nodes=tuple(n for n in self.nodes if n.id in kept),
                      edges=tuple(e for e in self.edges if e.source in kept and e.target in kept))

    def redacted(self) -> GraphPicture:
        """Labels with secret values replaced: a title may hold one, the page must not."""
        return evolve(self, nodes=tuple(evolve(n, label=redact_text(n.label))
                                        for n in self.nodes))
