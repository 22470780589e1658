"""RefreshLock: one refresh at a time per memory root, across processes."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Protocol, runtime_checkable


@runtime_checkable
class RefreshLock(Protocol):
    def hold(self, timeout: float) -> AbstractContextManager[None]:
        """Hold the lock for a with-block; RefreshBusy if not acquired within timeout."""
