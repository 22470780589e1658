"""MemoryPicture: the graph of the notes a scope admits, ready to be drawn."""

from __future__ import annotations

from collections.abc import Callable

from attrs import evolve

from memory.domain.errors import Unavailable
from memory.domain.graph_picture import GraphPicture
from memory.domain.refresh import GraphLag
from memory.domain.scope import ScopeFilter, ScopeNames, StatusFilter
from memory.ports.note_catalogue import NoteCatalogue
from memory.ports.graph_picture import GraphPictureSource


class MemoryPicture:
    """Notes are admitted by the index (as a search admits them), drawn from the graph."""

    def __init__(self, *, graph: GraphPictureSource, catalogue: NoteCatalogue,
                 scope_names: Callable[[], ScopeNames | None] = lambda: None,
                 graph_lag: Callable[[], GraphLag | None] = lambda: None):
        self._graph = graph
        self._catalogue = catalogue
        self._scope_names = scope_names  # a scope no note names is said so, with close names
        self._graph_lag = graph_lag  # notes written since the last full refresh are missing

    def draw(self, *, status: str | None = "any", **keys: str | None) -> GraphPicture:
        """The scope's keys are a search's: root_scope, repository, project, ticket and
        path_prefix; status defaults to any, so superseded notes show with what replaced them."""
        scope = ScopeFilter(status=StatusFilter.parse(status), **keys)
        picture = self._graph.picture()
        if picture is None:
            raise Unavailable("no graph yet: run `ai-memory refresh --mode full` to build it")
        admitted = frozenset(n.memory_id for n in self._catalogue.notes(scope))
        drawn = picture.restricted_to(admitted).redacted()
        return evolve(drawn, warnings=self._warnings(scope, drawn))

    def _warnings(self, scope: ScopeFilter, drawn: GraphPicture) -> tuple[str, ...]:
        names = self._scope_names() if scope.repository or scope.project or scope.ticket \
            else None  # the names are only read when a scope names one
        said = list(names.unmatched(scope)) if names is not None else []
        if not drawn.notes:
            said.append("the picture holds no note: no note of the graph is in this scope")
        lag = self._graph_lag()
        if lag is not None and lag.behind:
            said.append(f"{lag.describe()}: the picture leaves out what changed since the last "
                        "full refresh; `ai-memory refresh --mode full` brings it up to date")
        return tuple(said)
