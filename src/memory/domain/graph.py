"""Relations between notes as the graph reports them: neighbours and paths."""

from __future__ import annotations

from typing import Any

from attrs import frozen


@frozen(kw_only=True)
class Relation:
    """One edge between two graph nodes, named by memory_id when the node is a note."""

    source: str
    target: str
    relation: str  # references, related, supersedes, contains, repository, ...
    source_path: str | None = None  # where the relation is written, if known
    source_line: int | None = None


@frozen(kw_only=True)
class Neighbor:
    """A node within some hops of a note, with the relations that reach it."""

    node: str  # memory_id for a note, else the graph node id
    label: str
    kind: str  # note | heading | repository | project | ticket | tag | code | ...
    path: str | None
    depth: int
    via: tuple[Relation, ...]


@frozen(kw_only=True)
class GraphPath:
    """The relations leading from one note to another, in order."""

    source: str
    target: str
    hops: tuple[Relation, ...]
    nodes: tuple[dict[str, Any], ...] = ()  # {node, label, kind, path} along the path

    @property
    def length(self) -> int:
        return len(self.hops)
