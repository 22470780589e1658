"""PostgresRefreshLock: one refresh at a time per database, as a session advisory lock.

The lock lives on a connection of its own: a holder that dies (kill -9 included) drops
its connection and Postgres releases the lock at once; no owner file to clean up.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg

from memory.adapters.postgres.database import PostgresDatabase
from memory.domain.cancellation import CancelToken
from memory.domain.errors import RefreshBusy
from memory.ports.errors import StoreError
from memory.ports.lock import RefreshLock

REFRESH_KEY = 0x61696D02
_SLICE_S = 0.05


class PostgresRefreshLock(RefreshLock):
    def __init__(self, database: PostgresDatabase):
        self._db = database

    @contextmanager
    def hold(self, timeout: float, cancel: CancelToken | None = None) -> Iterator[None]:
        """A fresh session per call: nesting in one process is refused like a second holder."""
        self._db.open()
        try:
            conn = psycopg.connect(self._db.url, autocommit=True)
        except psycopg.Error as exc:
            raise StoreError(f"cannot take the refresh lock: {exc}") from exc
        try:
            self._acquire(conn, timeout, cancel)
            yield
        finally:
            conn.close()  # closing the session releases the lock

    @staticmethod
    def _acquire(conn: psycopg.Connection, timeout: float, cancel: CancelToken | None) -> None:
        deadline = time.monotonic() + max(0.0, timeout)
        while True:
            try:
                taken = conn.execute("SELECT pg_try_advisory_lock(%s)", (REFRESH_KEY,)).fetchone()[0]
            except psycopg.Error as exc:
                raise StoreError(f"cannot take the refresh lock: {exc}") from exc
            if taken:
                return
            if time.monotonic() >= deadline:
                raise RefreshBusy(f"another refresh is running (it holds the advisory lock of "
                                  f"the postgres store); waited {timeout:g}s")
            if cancel is not None:
                cancel.raise_if_cancelled()
            time.sleep(min(_SLICE_S, max(0.0, deadline - time.monotonic())))
