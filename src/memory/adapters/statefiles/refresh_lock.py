"""FileRefreshLock: one refresh at a time per state directory, across processes.

filelock takes an OS lock (flock on Unix, msvcrt on Windows) on an open file, so the
kernel drops it when the holding process dies, however it dies: no stale lock to clean.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from memory.adapters.statefiles.state_dir import ensure_state_dir
from memory.domain.errors import RefreshBusy
from memory.ports.errors import StoreError
from memory.ports.lock import RefreshLock


class FileRefreshLock(RefreshLock):
    """`<state_dir>/locks/refresh.lock`; the holder's pid goes in `refresh.owner` beside it."""

    def __init__(self, state_dir: str | os.PathLike[str]):
        self.path = Path(state_dir) / "locks" / "refresh.lock"
        # filelock truncates the lock file when it opens it, so the owner note lives apart.
        self._owner = self.path.with_name("refresh.owner")

    @contextmanager
    def hold(self, timeout: float) -> Iterator[None]:
        """Hold the lock for a with-block; RefreshBusy if not acquired within timeout.

        A fresh FileLock per call: nesting hold() in one process is refused like any other
        second holder instead of silently re-entering.
        """
        self._prepare()
        lock = FileLock(str(self.path), timeout=timeout)
        try:
            lock.acquire()
        except Timeout as exc:
            raise RefreshBusy(f"another refresh is running ({self._holder()}); "
                              f"waited {timeout:g}s for {self.path}") from exc
        try:
            self._note_owner()
            yield
        finally:
            lock.release()

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
