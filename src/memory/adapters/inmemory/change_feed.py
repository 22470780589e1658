"""InMemoryChangeFeed: a change feed a test drives by hand, on the caller's thread."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from memory.ports.change_feed import ChangeFeed


class InMemoryChangeFeed(ChangeFeed):
    def __init__(self):
        self._on_change: Callable[[frozenset[str]], None] | None = None
        self.starts = 0
        self.stopped = False
        self.settling_now = False  # a burst seen but not reported yet
        self.failed = False  # set by a test: the watching broke down

    @property
    def started(self) -> bool:
        return self._on_change is not None and not self.stopped

    def start(self, on_change: Callable[[frozenset[str]], None]) -> None:
        self.starts += 1
        self._on_change = on_change

    def settling(self) -> bool:
        return self.settling_now

    def alive(self) -> bool:
        return self.started and not self.failed

    def stop(self) -> None:
        self.stopped = True

    def emit(self, paths: Iterable[str]) -> None:
        """Report one burst, as the watcher's thread would once it settled."""
        if self.started:
            self._on_change(frozenset(paths))
