"""Opening apsw connections to the index database; library errors become StoreError."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import apsw
import sqlite_vec

from memory.adapters.sqlite.rows import IndexDamaged
from memory.ports.errors import StoreError

BUSY_MS = 10_000
# The WAL is cut back to this after a checkpoint finds no reader left in it.
JOURNAL_SIZE_LIMIT = 2**20

# Errors that mean the file itself is damaged, as opposed to a bad query.
DAMAGE = (apsw.CorruptError, apsw.NotADBError, apsw.IOError, UnicodeDecodeError, IndexDamaged)


def _load_vec(conn: apsw.Connection) -> None:
    conn.enable_load_extension(True)
    conn.load_extension(sqlite_vec.loadable_path())
    # Nothing else may load code through this connection.
    conn.enable_load_extension(False)


def _pragma(conn: apsw.Connection, statement: str) -> list:
    # apsw runs the statements of one execute() lazily, as their rows are read: one each.
    return conn.execute(f"PRAGMA {statement}").fetchall()


def _no_checkpoint_on_close(conn: apsw.Connection) -> None:
    # Only the refresher changes the database file (by its checkpoints, which it records
    # in CURRENT); a reader closing last must not rewrite it behind that record.
    conn.config(apsw.SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1)


def open_reader(path: Path) -> apsw.Connection:
    """Read-only connection to the live database; each read transaction sees one state."""
    with store_errors(f"cannot open the index {path}"):
        conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
        try:
            _no_checkpoint_on_close(conn)
            conn.set_busy_timeout(BUSY_MS)
            _load_vec(conn)
        except BaseException:
            conn.close()
            raise
        return conn


def open_immutable(path: Path) -> apsw.Connection:
    """Read-only connection to a file nothing writes (the last-good copy): no locking."""
    uri = Path(path).resolve().as_uri() + "?immutable=1"
    with store_errors(f"cannot open {path}"):
        conn = apsw.Connection(uri, flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
        _load_vec(conn)
        return conn


def open_writer(path: Path) -> apsw.Connection:
    """The refresher's connection to the live database (WAL, durable commits)."""
    with store_errors(f"cannot open the index {path} for writing"):
        conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READWRITE)
        try:
            if conn.readonly("main"):  # SQLite opens a file it may not write read-only
                raise apsw.ReadOnlyError("the database file is not writable")
            _no_checkpoint_on_close(conn)
            conn.set_busy_timeout(BUSY_MS)
            _load_vec(conn)
            mode = _pragma(conn, "journal_mode")[0][0]
            if mode != "wal":
                raise StoreError(f"the index {path} is in journal mode {mode!r}, not WAL")
            # FULL: a refresh that returned is on disk even after a power cut.
            _pragma(conn, "synchronous=FULL")
            _pragma(conn, "wal_autocheckpoint=0")  # the refresher checkpoints after commit
            _pragma(conn, f"journal_size_limit={JOURNAL_SIZE_LIMIT}")
        except BaseException:
            conn.close()
            raise
        return conn


def open_building(path: Path) -> apsw.Connection:
    """Connection to a new database file no other process sees until it is published."""
    with store_errors(f"cannot create the index file {path}"):
        conn = apsw.Connection(str(path))
        _load_vec(conn)
        # A private file: durability comes from the fsync before publish, and the
        # in-memory journal still lets a failed add roll back to its savepoint.
        _pragma(conn, "journal_mode=MEMORY")
        _pragma(conn, "synchronous=OFF")
        return conn


def make_wal(path: Path) -> None:
    """Switch a finished, closed database file to WAL: how the live index is shared."""
    with store_errors(f"cannot switch {path} to WAL"):
        # Closed by its only user: the close takes the empty -wal and -shm files away.
        conn = apsw.Connection(str(path))
        try:
            if _pragma(conn, "journal_mode=WAL")[0][0] != "wal":
                raise StoreError(f"{path} refused WAL mode")
        finally:
            conn.close()


@contextmanager
def store_errors(what: str) -> Iterator[None]:
    """Re-raise SQLite and file-system failures as StoreError, naming what failed."""
    try:
        yield
    except StoreError:
        raise
    except apsw.ReadOnlyError as exc:
        raise StoreError(f"{what}: the folder or file is read-only ({exc})") from exc
    except (apsw.CantOpenError, PermissionError) as exc:
        raise StoreError(f"{what}: {exc} (a read-only or missing folder?)") from exc
    except apsw.Error as exc:
        raise StoreError(f"{what}: {exc}") from exc
    except OSError as exc:
        raise StoreError(f"{what}: {exc}") from exc
