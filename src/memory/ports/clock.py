"""Clock: the current time, so the core never reads it directly."""

from __future__ import annotations

from typing import Protocol, runtime_checkable


@runtime_checkable
class Clock(Protocol):
    def now_iso(self) -> str:
        """Current UTC time, ISO 8601 with seconds."""

    def monotonic(self) -> float:
        """Seconds from an arbitrary start, for measuring durations."""
