"""FeedbackLog and RefreshHistory: append-only records kept in the state directory."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class FeedbackLog(Protocol):
    def append(self, record: Mapping[str, Any]) -> None:
        """Append one feedback record durably."""

    def count(self) -> int:
        """How many records were appended so far."""


@runtime_checkable
class RefreshHistory(Protocol):
    def append(self, record: Mapping[str, Any]) -> None:
        """Record one finished refresh."""

    def last(self) -> Mapping[str, Any] | None:
        """The most recent refresh record, or None."""
