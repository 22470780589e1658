"""CatalogueScopeNames: the repositories, projects and tickets notes name, read once per
index generation (a search's scope check and the workspace's default both ask)."""

from __future__ import annotations

import threading

from memory.domain.scope import ScopeFilter, ScopeNames, StatusFilter
from memory.ports.index_generations import IndexGenerations
from memory.ports.note_catalogue import NoteCatalogue


class CatalogueScopeNames:
    """Callable giving the ScopeNames of the current generation (empty without an index)."""

    def __init__(self, *, catalogue: NoteCatalogue, index: IndexGenerations):
        self._catalogue = catalogue
        self._index = index
        self._lock = threading.Lock()
        self._known: tuple[str | None, ScopeNames] = ("", ScopeNames())

    def __call__(self) -> ScopeNames:
        current = self._index.current()
        generation = current.id if current else None
        with self._lock:
            if self._known[0] == generation:
                return self._known[1]
        notes = self._catalogue.notes(ScopeFilter(status=StatusFilter.ANY)) if current else []
        names = ScopeNames.of(notes)
        with self._lock:
            self._known = (generation, names)
        return names
