"""Cancelling long work: a token the caller sets, checked by the work between its steps."""

from __future__ import annotations

import threading

from memory.domain.errors import AiMemoryError


class Cancelled(AiMemoryError):
    """The caller cancelled the operation; nothing it had staged was kept."""


class CancelToken:
    """Set once from any thread; the work asks `raise_if_cancelled()` at safe points.

    A refresh checks it between batches of notes and while it waits for the graph build,
    so a cancel costs at most one batch of work, never the whole refresh.
    """

    def __init__(self) -> None:
        self._event = threading.Event()
        self._reason = "cancelled"

    def cancel(self, reason: str = "cancelled") -> None:
        if not self._event.is_set():
            self._reason = reason
            self._event.set()

    def cancelled(self) -> bool:
        return self._event.is_set()

    @property
    def reason(self) -> str:
        return self._reason

    def raise_if_cancelled(self) -> None:
        if self._event.is_set():
            raise Cancelled(self._reason)

    def wait(self, timeout: float) -> bool:
        """Sleep until cancelled or timeout; True when cancelled."""
        return self._event.wait(max(0.0, timeout))

