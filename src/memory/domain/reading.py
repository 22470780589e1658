"""What reading a note and walking the graph answer: typed results of get, neighbours, path."""

from __future__ import annotations

from attrs import field, frozen

from memory.domain.graph import GraphPath, Neighbor


@frozen(kw_only=True)
class NoteLine:
    line: int  # 1-based
    text: str


@frozen(kw_only=True)
class NoteRead:
    """Lines of one note (redacted), numbered for exact citations; `truncated` means ask
    again with a later start_line."""

    memory_id: str
    path: str
    title: str
    status: str
    content_hash: str
    front_matter: dict = field(factory=dict)
    line_count: int
    start_line: int
    end_line: int
    lines: tuple[NoteLine, ...]
    redacted_lines: tuple[int, ...] = ()
    truncated: bool = False
    warnings: tuple[str, ...] = ()


@frozen(kw_only=True)
class NoteRef:
    memory_id: str
    path: str


@frozen(kw_only=True)
class Neighbourhood:
    """What a note is related to in the knowledge graph, up to `depth` hops."""

    memory_id: str
    path: str
    depth: int
    graph_generation: str | None
    neighbors: tuple[Neighbor, ...]


@frozen(kw_only=True)
class RelationPath:
    """The shortest relationship path between two notes, or connected: false."""

    source: NoteRef
    target: NoteRef
    graph_generation: str | None
    connected: bool
    path: GraphPath | None = None
