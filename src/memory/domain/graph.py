"""Relations between notes as the graph reports them: neighbours and paths."""

from __future__ import annotations

from attrs import frozen


@frozen(kw_only=True)
class Relation:
    """One edge between two graph nodes, named by memory_id when the node is a note."""

    source: str
    target: str
    relation: str  # references, related, supersedes, contains, repository, ...
    source_path: str | None = None  # where the relation is written, if known
    source_line: int | None = None

    def as_dict(self) -> dict:
        return {"source": self.source, "target": self.target, "relation": self.relation,
                "source_path": self.source_path, "source_line": self.source_line}


@frozen(kw_only=True)
class Neighbor:
    node: str  # memory_id for a note, else the graph node id
    label: str
    kind: str  # note | heading | repository | project | ticket | tag | code | ...
    path: str | None
    depth: int
    via: tuple[Relation, ...]

    def as_dict(self) -> dict:
        return {"node": self.node, "label": self.label, "kind": self.kind, "path": self.path,
                "depth": self.depth, "via": [r.as_dict() for r in self.via]}


@frozen(kw_only=True)
class GraphPath:
    source: str
    target: str
    hops: tuple[Relation, ...]
    nodes: tuple[dict, ...] = ()  # {node, label, kind, path} along the path

    def as_dict(self) -> dict:
        return {"source": self.source, "target": self.target, "length": len(self.hops),
                "hops": [h.as_dict() for h in self.hops], "nodes": list(self.nodes)}
