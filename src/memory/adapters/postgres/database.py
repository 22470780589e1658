"""PostgresDatabase: the connection pool, the schema, and the generation this thread reads."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

import psycopg
from psycopg_pool import ConnectionPool, PoolTimeout

from memory.adapters.postgres import schema, seals
from memory.ports.errors import StoreError, StoreUnsupported

T = TypeVar("T")
POOL_MAX = 8  # connections per process: a server's worker threads share them
CONNECT_TIMEOUT_S = 10.0
MAX_FALLBACKS = 16  # generations a read may find damaged, one after another


class PostgresDatabase:
    """One pool per process and URL; reads inside a snapshot see its pinned generation."""

    def __init__(self, url: str, *, pool_max: int = POOL_MAX):
        self.url = url
        self._pool = ConnectionPool(url, min_size=1, max_size=pool_max, open=False,
                                    kwargs={"autocommit": True}, timeout=CONNECT_TIMEOUT_S)
        self._opened = False
        self._lock = threading.Lock()
        self._pins = threading.local()
        # Generations this process found damaged: also kept here, since a reader whose role
        # may only SELECT cannot record them for every process.
        self._damaged: set[str] = set()

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection]:
        """A pooled connection; psycopg's errors leave as StoreError."""
        self.open()
        try:
            with self._pool.connection() as conn:
                yield conn
        except psycopg.Error as exc:
            raise StoreError(f"postgres store failed: {_reason(exc)}") from exc

    def run(self, work: Callable[[psycopg.Connection], T]) -> T:
        with self.connection() as conn:
            return work(conn)

    def read(self, work: Callable[[psycopg.Connection, str], T], empty: T) -> T:
        """work(conn, generation) on the generation this thread reads (`empty` when none).
        A row failing its seal marks its generation damaged and the read runs again on
        what serves then (a pinned read moves too: its caller checks current() after)."""
        with self.connection() as conn:
            for _ in range(MAX_FALLBACKS):
                generation = self.reading(conn)
                if generation is None:
                    return empty
                try:
                    return work(conn, generation)
                except seals.RowDamaged as exc:
                    self.mark_damaged(conn, generation, str(exc))
                    self._repin(conn)
            raise StoreError("postgres store is damaged: no whole index generation to read; "
                             "run a refresh")

    def reading(self, conn: psycopg.Connection) -> str | None:
        pinned = getattr(self._pins, "stack", None)
        return pinned[-1] if pinned else self.published(conn)

    def published(self, conn: psycopg.Connection) -> str | None:
        """The generation that serves: the pointer's, unless it is missing or damaged."""
        with self._lock:
            damaged = sorted(self._damaged)
        row = conn.execute(seals.SERVING, (damaged,)).fetchone()
        return row[0] if row else None

    def mark_damaged(self, conn: psycopg.Connection, generation: str, problem: str) -> None:
        """Serve around a damaged generation: in this process always, in every process
        when the role may write the record."""
        with self._lock:
            self._damaged.add(generation)
        seals.record(conn, generation, problem)

    def _repin(self, conn: psycopg.Connection) -> None:
        stack = getattr(self._pins, "stack", None)
        if stack:
            stack[-1] = self.published(conn)

    @contextmanager
    def pinned(self) -> Iterator[str | None]:
        """Within it, this thread reads the generation published at its start; rows of a
        generation never change and collection waits out a grace period, so the id is all
        that needs pinning."""
        generation = self.run(self.published)
        stack = getattr(self._pins, "stack", None)
        if stack is None:
            stack = self._pins.stack = []
        stack.append(generation)
        try:
            yield generation
        finally:
            stack.pop()

    def close(self) -> None:
        with self._lock:
            if self._opened:
                self._pool.close()
                self._opened = False

    def open(self) -> None:
        """Connect, refuse an old pgvector, and create the schema if it is missing (once
        per process)."""
        with self._lock:
            if self._opened:
                return
            try:  # the pool stays open on failure and reconnects: the next call retries
                self._pool.open(wait=True, timeout=CONNECT_TIMEOUT_S)
                with self._pool.connection() as conn:
                    schema.require_pgvector(conn)
                    schema.create(conn)
            except StoreUnsupported as exc:
                raise StoreUnsupported(f"cannot open the postgres store at "
                                       f"{_shown(self.url)}: {exc}") from exc
            except (psycopg.Error, PoolTimeout) as exc:
                raise StoreError(f"cannot open the postgres store at {_shown(self.url)}: "
                                 f"{_reason(exc)}") from exc
            self._opened = True


def translated(method: Callable[..., T]) -> Callable[..., T]:
    """psycopg's errors raised by a method leave it as StoreError."""
    @functools.wraps(method)
    def run(*args, **kwargs):
        try:
            return method(*args, **kwargs)
        except psycopg.Error as exc:
            raise StoreError(f"postgres store failed: {_reason(exc)}") from exc
    return run


def _shown(url: str) -> str:
    """The URL without its password: errors reach logs and tool answers."""
    return psycopg.conninfo.make_conninfo(url, password="***") if "password" in \
        psycopg.conninfo.conninfo_to_dict(url) else url


def _reason(exc: Exception) -> str:
    return " ".join(str(exc).split())[:300] or type(exc).__name__
