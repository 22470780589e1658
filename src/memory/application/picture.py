"""MemoryPicture: the graph of the notes a scope admits, ready to be drawn."""

from __future__ import annotations

from memory.domain.errors import Unavailable
from memory.domain.graph_picture import GraphPicture
from memory.domain.scope import ScopeFilter, StatusFilter
from memory.ports.note_catalogue import NoteCatalogue
from memory.ports.graph_picture import GraphPictureSource


class MemoryPicture:
    """Notes are admitted by the index (as a search admits them), drawn from the graph."""

    def __init__(self, *, graph: GraphPictureSource, catalogue: NoteCatalogue):
        self._graph = graph
        self._catalogue = catalogue

    def draw(self, *, status: str | None = "any", **keys: str | None) -> GraphPicture:
        """The scope's keys are a search's: root_scope, repository, project, ticket and
        path_prefix; status defaults to any, so superseded notes show with what replaced them."""
        scope = ScopeFilter(status=StatusFilter.parse(status), **keys)
        picture = self._graph.picture()
        if picture is None:
            raise Unavailable("no graph yet: run `ai-memory refresh --mode full` to build it")
        admitted = frozenset(n.memory_id for n in self._catalogue.notes(scope))
        return picture.restricted_to(admitted).redacted()
