"""ChangeFeed: notices edits to the Markdown root while a server runs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, runtime_checkable


@runtime_checkable
class ChangeFeed(Protocol):
    def start(self, on_change: Callable[[frozenset[str]], None]) -> None:
        """Begin watching; return once every later change will be reported.

        `on_change` runs on the feed's own thread, once per burst of changes (a git pull
        touching hundreds of notes is one call), with the changed paths relative to the
        root. Derived state and hidden folders (.ai-memory, .git, .obsidian, .trash) and
        non-Markdown files are never reported.
        """

    def settling(self) -> bool:
        """True while changes were seen but their burst is not reported yet."""

    def alive(self) -> bool:
        """True from start until stop, unless watching failed (changes are then missed)."""

    def stop(self) -> None:
        """Stop watching and wait briefly for the feed's thread; safe to call twice."""
