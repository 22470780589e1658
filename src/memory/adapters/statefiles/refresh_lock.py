"""FileRefreshLock: one refresh at a time per state directory, across processes.

filelock takes an OS lock (flock on Unix, msvcrt on Windows) on an open file, so the
kernel drops it when the holding process dies, however it dies: no stale lock to clean.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from memory.adapters.statefiles.state_dir import ensure_state_dir
from memory.domain.cancellation import CancelToken
from memory.domain.errors import RefreshBusy
from memory.ports.errors import StoreError
from memory.ports.lock import RefreshLock

_SLICE_S = 0.25  # how often a waiting refresh looks at its cancel token


class FileRefreshLock(RefreshLock):
    """`<state_dir>/locks/refresh.lock`; the holder's pid goes in `refresh.owner` beside it."""

    def __init__(self, state_dir: str | os.PathLike[str]):
        self.path = Path(state_dir) / "locks" / "refresh.lock"
        # filelock truncates the lock file when it opens it, so the owner note lives apart.
        self._owner = self.path.with_name("refresh.owner")

    @contextmanager
    def hold(self, timeout: float, cancel: CancelToken | None = None) -> Iterator[None]:
        """Hold the lock for a with-block; RefreshBusy if not acquired within timeout.

        A fresh FileLock per call: nesting hold() in one process is refused like any other
        second holder instead of silently re-entering. The wait is sliced so that a
        cancelled refresh stops waiting at once.
        """
        self._prepare()
        lock = FileLock(str(self.path), timeout=timeout)
        self._acquire(lock, timeout, cancel)
        try:
            self._note_owner()
            yield
        finally:
            lock.release()

    def _acquire(self, lock: FileLock, timeout: float, cancel: CancelToken | None) -> None:
        deadline = time.monotonic() + max(0.0, timeout)
        while True:
            try:
                lock.acquire(timeout=min(_SLICE_S, max(0.0, deadline - time.monotonic())))
                return
            except Timeout as exc:
                if time.monotonic() >= deadline:
                    raise RefreshBusy(f"another refresh is running ({self._holder()}); "
                                      f"waited {timeout:g}s for {self.path}") from exc
            except OSError as exc:  # read-only state folder, or no right to the lock file
                raise StoreError(f"cannot take the refresh lock: cannot write "
                                 f"{exc.filename or self.path}: {exc.strerror or exc}") from exc
            if cancel is not None:
                cancel.raise_if_cancelled()

    def _prepare(self) -> None:
        ensure_state_dir(self.path.parent.parent)
        try:
            self.path.parent.mkdir(exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create lock directory {self.path.parent}: {exc}") from exc

    def _note_owner(self) -> None:
        try:
            self._owner.write_text(f"{os.getpid()}\n", encoding="utf-8")
        except OSError:
            pass  # the note only improves the busy message; the lock itself is held

    def _holder(self) -> str:
        try:
            pid = self._owner.read_text(encoding="utf-8").strip()
        except OSError:
            return "holder unknown"
        return f"last holder pid {pid}" if pid else "holder unknown"
