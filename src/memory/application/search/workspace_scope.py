"""WorkspaceScope: the repository a search defaults to, from where the agent is working.

The client's workspace roots (MCP roots) come first, then the server's own working folder
when it lies in a git work tree. A key is inferred only when some note has it: a search
from a repository the memory knows nothing about stays unscoped instead of empty.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from memory.application.search.scope_names import CatalogueScopeNames
from memory.domain.workspace import remote_repository_key, repository_key
from memory.ports.note_catalogue import NoteCatalogue
from memory.ports.index_generations import IndexGenerations
from memory.ports.source_control import SourceControl

Default = tuple[str, str]  # (repository key, where it came from)


class WorkspaceScope:
    """Callable giving the default repository (key, source) of a search, or None."""

    def __init__(self, *, source_control: SourceControl, catalogue: NoteCatalogue,
                 index: IndexGenerations, cwd: str | None = None, explicit: str | None = None,
                 explicit_source: str = "configured default", enabled: bool = True):
        self._source_control = source_control
        self._cwd = cwd
        self._explicit = repository_key(explicit) if explicit else None
        self._explicit_source = explicit_source
        self._enabled = enabled
        self._lock = threading.Lock()
        self._roots: tuple[str, ...] = ()
        self._candidates: dict[tuple[str, bool], tuple[Default, ...]] = {}
        self._names = CatalogueScopeNames(catalogue=catalogue, index=index)

    def set_roots(self, folders: Sequence[str]) -> None:
        """The client's workspace folders (its MCP roots), in the client's order."""
        with self._lock:
            self._roots = tuple(folders)

    def __call__(self) -> Default | None:
        if not self._enabled:
            return None
        if self._explicit:
            return self._explicit, self._explicit_source
        known = self._repositories()
        if not known:
            return None
        with self._lock:
            roots = self._roots
        found = [d for d in (self._known_default(f, "mcp-roots", False, known) for f in roots) if d]
        if len({key for key, _ in found}) > 1:
            return None  # a multi-repository workspace: no single default
        if found:
            return found[0]
        return self._known_default(self._cwd, "cwd", True, known) if self._cwd else None

    def _known_default(self, folder: str, where: str, need_work_tree: bool,
                       known: frozenset[str]) -> Default | None:
        return next((c for c in self._identify(folder, where, need_work_tree) if c[0] in known),
                    None)

    def _identify(self, folder: str, where: str, need_work_tree: bool) -> tuple[Default, ...]:
        """Keys the folder may stand for, best first: its origin remote, then its name."""
        cache_key = (folder, need_work_tree)
        with self._lock:
            if cache_key in self._candidates:
                return self._candidates[cache_key]
        tree = self._source_control.work_tree(folder)
        out: list[Default] = []
        if tree is not None:
            remote = remote_repository_key(tree.origin_url)
            if remote:
                out.append((remote, f"{where}:{folder} (git-remote:origin)"))
            name = repository_key(tree.path)
            if name:
                out.append((name, f"{where}:{folder} (folder-name)"))
        elif not need_work_tree:
            name = repository_key(folder)
            if name:
                out.append((name, f"{where}:{folder} (folder-name)"))
        result = tuple(out)
        with self._lock:
            self._candidates[cache_key] = result
        return result

    def _repositories(self) -> frozenset[str]:
        """Repository keys some note of the current generation names (cached per generation)."""
        return self._names().repositories
