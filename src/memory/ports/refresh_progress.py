"""RefreshProgressBoard: how far the running refresh has come, readable from any process."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from memory.domain.refresh import BuildProgress


@runtime_checkable
class RefreshProgressBoard(Protocol):
    def post(self, progress: BuildProgress) -> None:
        """Record this process's progress (at most a few writes a second; never fails the refresh)."""

    def clear(self) -> None:
        """This process's refresh ended (published, kept the last good state, or failed)."""

    def read(self) -> BuildProgress | None:
        """The refresh running now in any process, or None (none, or its process died)."""
