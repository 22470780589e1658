"""Opening apsw connections with sqlite-vec loaded; library errors become StoreError."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import apsw
import sqlite_vec

from memory.ports.errors import StoreError


def _load_vec(conn: apsw.Connection) -> None:
    conn.enable_load_extension(True)
    conn.load_extension(sqlite_vec.loadable_path())
    # Nothing else may load code through this connection.
    conn.enable_load_extension(False)


def open_published(path: Path, vec: bool = True) -> apsw.Connection:
    """Read-only connection to a published generation.

    immutable=1 is true by construction (a published file is never written again) and
    lets SQLite skip file locking and change detection on every statement.
    """
    uri = Path(path).resolve().as_uri() + "?immutable=1"
    with store_errors(f"cannot open index generation {Path(path).name}"):
        conn = apsw.Connection(uri, flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
        if vec:
            _load_vec(conn)
        return conn


def open_private(path: Path) -> apsw.Connection:
    """Read-write connection to a staging file no other process touches."""
    with store_errors(f"cannot open staged index {Path(path).name}"):
        conn = apsw.Connection(str(path))
        _load_vec(conn)
        # A private file: durability comes from the fsync before publish, and the
        # in-memory journal still lets a failed add roll back to its savepoint.
        conn.execute("PRAGMA journal_mode=MEMORY; PRAGMA synchronous=OFF")
        return conn


def open_shared(path: Path, busy_ms: int = 10_000) -> apsw.Connection:
    """Read-write connection to a file several processes use at once (WAL)."""
    with store_errors(f"cannot open {Path(path).name}"):
        conn = apsw.Connection(str(path))
        conn.set_busy_timeout(busy_ms)
        conn.execute("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL")
        return conn


@contextmanager
def store_errors(what: str) -> Iterator[None]:
    """Re-raise SQLite and file-system failures as StoreError, naming what failed."""
    try:
        yield
    except apsw.Error as exc:
        raise StoreError(f"{what}: {exc}") from exc
    except OSError as exc:
        raise StoreError(f"{what}: {exc}") from exc
