"""Default search scope per session: over HTTP each session's workspace decides, not the process's."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable

from memory.application.search.workspace_scope import Default, WorkspaceScope
from memory.entrypoints.mcp_roots import CURRENT_WORKSPACE, Workspace
from memory.entrypoints.settings import REPOSITORY_ENV

MAX_WORKSPACES = 256  # distinct (roots, folder, settings) kept; each caches its repository keys


class SessionWorkspaces:
    """The engine's `default_repository`: the calling session's WorkspaceScope, made on first use.

    The session's workspace arrives as a request value (CURRENT_WORKSPACE, set per tool call by
    ClientRoots), so two sessions never see each other's roots.
    """

    def __init__(self, make: Callable[[Workspace], WorkspaceScope]):
        self._make = make
        self._lock = threading.Lock()
        self._scopes: OrderedDict[Workspace, WorkspaceScope] = OrderedDict()

    def __call__(self) -> Default | None:
        return self._scope(CURRENT_WORKSPACE.get() or Workspace())()

    def _scope(self, workspace: Workspace) -> WorkspaceScope:
        with self._lock:
            scope = self._scopes.get(workspace)
            if scope is None:
                scope = self._scopes[workspace] = self._make(workspace)
                scope.set_roots(workspace.roots)
                while len(self._scopes) > MAX_WORKSPACES:
                    self._scopes.popitem(last=False)
            self._scopes.move_to_end(workspace)
            return scope


def session_scoped(settings) -> Callable:
    """A LazyApplication `compose` hook: searches default to the calling session's workspace.

    The process's own working folder means nothing to a shared server, so only a session's
    roots and its bridge's folder are consulted; AI_MEMORY_REPOSITORY and AI_MEMORY_AUTO_SCOPE
    of the server process apply to sessions that do not say otherwise.
    """
    def compose(app) -> None:
        gateways = app.gateways

        def make(workspace: Workspace) -> WorkspaceScope:
            return WorkspaceScope(source_control=gateways.source_control(),
                                  catalogue=gateways.catalogue(), index=gateways.index(),
                                  cwd=workspace.folder,
                                  explicit=workspace.repository or settings.repository,
                                  explicit_source=f"env:{REPOSITORY_ENV}",
                                  enabled=workspace.auto_scope and settings.auto_scope)
        app.use_cases.default_repository.override(SessionWorkspaces(make))
    return compose
