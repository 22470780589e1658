"""RefreshLock: one refresh at a time per memory root, across processes."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Protocol, runtime_checkable

from memory.domain.cancellation import CancelToken


@runtime_checkable
class RefreshLock(Protocol):
    def hold(self, timeout: float, cancel: CancelToken | None = None) -> AbstractContextManager[None]:
        """Hold the lock for a with-block; RefreshBusy if not acquired within timeout.

        Cancelled when `cancel` is set while waiting; StoreError when the lock file cannot
        be created or opened (a read-only state folder).
        """
