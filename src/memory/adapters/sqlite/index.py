"""SqliteIndex: this process's reader of the live index database, following CURRENT.

Each operation reads inside one read transaction (a WAL snapshot), so it sees one
committed generation however many refreshes commit meanwhile; `steady()` holds that
snapshot for a whole use case. Damage is what the file says: a row failing its CRC, a
decoding error, SQLite's own corruption errors, or a failed check of a file that changed
behind its refresher's back. Damage retires the database for every process (index/DAMAGED)
and the last-good copy serves until a refresh rebuilds the index.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import TypeVar

import apsw

from memory.adapters.sqlite.checks import FileCheck, verified
from memory.adapters.sqlite.connection import DAMAGE
from memory.adapters.sqlite.database import Database, DatabaseClosed
from memory.adapters.sqlite.layout import IndexLayout, Pointer, stat_key
from memory.adapters.sqlite.view import GenerationView
from memory.domain.refresh import GenerationInfo
from memory.ports.errors import StoreError

T = TypeVar("T")
_UNSEEN = object()
CHECK_WAIT_S = 60.0  # check_current waits this long for a check of a newly opened file


class SqliteIndex:
    """Serves the database CURRENT names (or, when it is damaged, the last-good copy)."""

    def __init__(self, state_dir: str | os.PathLike[str]):
        self.layout = IndexLayout(state_dir)
        self._lock = threading.RLock()
        self._live: Database | None = None
        self._pointer: Pointer | None = None
        self._fallback: Database | None = None
        self._signature: object = _UNSEEN
        self._problems: list[str] = []
        self._damaged: dict[str, str] = {}  # database file name -> why it is not served
        self._checks: dict[tuple, FileCheck] = {}  # (file, inode, size, mtime) -> check
        self._copies: dict[tuple, str] = {}  # last-good copy state -> "ok" or why not
        self._pins = threading.local()

    # -- reading -----------------------------------------------------------------------

    def read(self, read: Callable[[GenerationView], T], empty: T) -> T:
        """read(view) on the generation this thread sees now (`empty` when there is none).

        Damage found while reading retires that database and the read runs once more on
        what serves instead; inside steady() the caller's generation check sees the switch.
        """
        def on(database: Database) -> T:
            pinned = getattr(self._pins, "view", None)
            if pinned is not None:  # a search makes ~130 reads: no context manager each
                return read(pinned)
            with self._view(database) as view:
                return read(view)
        return self._attempt(on, empty)

    @contextmanager
    def steady(self) -> Iterator[None]:
        """Within it, this thread's reads share one snapshot: the first read opens it."""
        self._pins.depth = getattr(self._pins, "depth", 0) + 1
        try:
            yield
        finally:
            self._pins.depth -= 1
            if self._pins.depth == 0:
                self._unpin()

    def current(self) -> GenerationInfo | None:
        """The generation this thread sees: its pinned one inside steady(), else the latest
        committed one (read again only when a commit came since)."""
        if getattr(self._pins, "depth", 0):
            return self.read(lambda view: view.info, None)
        return self._attempt(lambda database: database.latest(), None)

    def serving(self) -> Database | None:
        """The database to read now; looks at CURRENT, DAMAGED and the file when they changed."""
        with self._lock:
            signature = self._observe()
            if signature != self._signature:
                self._signature = signature
                self._resolve()
            return self._fallback if self._live is None or self._live_damaged() else self._live

    def live(self) -> tuple[Pointer, Database] | None:
        """CURRENT and the live database it names, when they are usable (for a stage)."""
        with self._lock:
            self.serving()
            if self._pointer is None or self._live is None or self._live_damaged():
                return None
            return self._pointer, self._live

    def check_current(self) -> list[str]:
        """Why what serves is not the complete live database; empty when it is.

        Waits for the check of a file this process has just opened (a fraction of a
        second at 10k notes), outside the lock, so reads go on meanwhile.
        """
        self.serving()
        with self._lock:
            live = self._live.path.name if self._live is not None else None
            pending = [(key, check) for key, check in self._checks.items() if key[0] == live]
            self._checks = dict(pending)
        for (name, *_), check in pending:
            result = check.wait(CHECK_WAIT_S)
            if result not in (None, "ok"):
                with self._lock:
                    if name not in self._damaged:
                        self._mark(name, f"index {name} failed its check: {result}")
        serving = self.serving()
        with self._lock:
            problems = list(self._problems)
            if self._live_damaged():
                problems.append(self._damaged[self._live.path.name])
            if serving is not None and serving is self._fallback:
                problems.append(self._serving_copy())
            return list(dict.fromkeys(problems))

    def retire(self, database: Database, why: str) -> None:
        """Stop serving a database found damaged (also by the vector loader or a stage)."""
        self._retire(database, why)

    def invalidate(self) -> None:
        """Look at CURRENT again on the next read (after this process published)."""
        with self._lock:
            self._signature = _UNSEEN

    def close(self) -> None:
        with self._lock:
            for database in (self._live, self._fallback):
                if database is not None:
                    database.close()
            self._live = self._fallback = self._pointer = None
            self._signature = _UNSEEN

    # -- snapshots ---------------------------------------------------------------------

    def _attempt(self, work: Callable[[Database], T], empty: T) -> T:
        why: BaseException | None = None
        for _ in range(2):
            pinned = getattr(self._pins, "view", None)
            database = self._pins.database if pinned is not None else self.serving()
            if database is None:
                return empty
            try:
                return work(database)
            except DAMAGE as exc:
                why = exc
            except (apsw.CantOpenError, DatabaseClosed) as exc:  # moved on or gone: look again
                why = exc
                self.invalidate()
                continue
            self._unpin()
            self._retire(database, f"failed while reading: {why}")
        raise StoreError(f"index read failed: {why}") from why

    @contextmanager
    def _view(self, database: Database) -> Iterator[GenerationView]:
        pinned = getattr(self._pins, "view", None)
        if pinned is not None:
            yield pinned
            return
        if getattr(self._pins, "depth", 0) == 0:
            with database.snapshot() as view:
                yield view
            return
        stack = ExitStack()
        view = stack.enter_context(database.snapshot())
        self._pins.stack, self._pins.view, self._pins.database = stack, view, database
        yield view

    def _unpin(self) -> None:
        stack = getattr(self._pins, "stack", None)
        self._pins.stack = self._pins.view = self._pins.database = None
        if stack is not None:
            try:
                stack.close()
            except (apsw.Error, StoreError):
                pass  # ending a read on a damaged or vanished file changes nothing

    # -- what serves -------------------------------------------------------------------

    def _observe(self) -> tuple:
        live = self._live.path if self._live is not None else None
        return (self.layout.signature(), stat_key(live) if live is not None else None)

    def _resolve(self) -> None:
        problems: list[str] = []
        try:
            pointer = self.layout.read_pointer()
        except StoreError as exc:
            pointer = None
            problems.append(str(exc))
        if pointer is not None:
            pointer = self._follow(pointer, problems)
        elif self._live is not None and not self._live.path.exists():
            problems.append(f"the index folder {self.layout.dir} is gone (deleted while this "
                            f"process ran?): run a refresh")
            self._drop_live()
        elif self._live is not None and not problems:
            problems.append("index pointer CURRENT is missing")
        self._pointer = pointer
        self._read_marker()
        if self._live is None or self._live_damaged():
            self._open_fallback(problems)
        elif self._fallback is not None:
            self._fallback.close()
            self._fallback = None
        self._problems = problems

    def _follow(self, pointer: Pointer, problems: list[str]) -> Pointer:
        path = self.layout.dir / pointer.file
        key = stat_key(path)
        if key is None:
            problems.append(f"index pointer names a missing file {pointer.file}")
            self._drop_live()
            return pointer
        opened = self._live is None or self._live.path != path
        if opened:
            self._drop_live()
            self._live = Database(path, on_damage=self._damage_reporter(path.name))
        if pointer.size is not None and (key[1], key[2]) != (pointer.size, pointer.mtime_ns):
            # Changed behind its refresher's back (damage, or a copy of the folder): checked
            # before it serves.
            result = self._check(path.name, key).wait(CHECK_WAIT_S)
            if result != "ok":
                self._mark(path.name, f"index {path.name} changed since its last refresh and "
                                      f"fails its check: {result}")
        elif opened:
            self._check(path.name, key)  # once per file per process, in the background
        return pointer

    def _check(self, name: str, key: tuple) -> FileCheck:
        found = self._checks.get((name, *key))
        if found is None:
            found = self._checks[(name, *key)] = FileCheck(self._live)
        return found

    def _read_marker(self) -> None:
        marker = self.layout.read_damage()
        if marker is not None and self._pointer is not None \
                and marker.get("file") in (self._pointer.file, None):
            self._damaged.setdefault(self._pointer.file, str(marker.get("why")))

    def _live_damaged(self) -> bool:
        return self._live is not None and self._live.path.name in self._damaged

    def _drop_live(self) -> None:
        if self._live is not None:
            self._live.close()
            self._live = None

    def _damage_reporter(self, name: str) -> Callable[[str], None]:
        def report(why: str) -> None:
            with self._lock:
                if self._live is not None and self._live.path.name == name:
                    self._retire(self._live, why)
        return report

    def _retire(self, database: Database, why: str) -> None:
        with self._lock:
            if database is self._fallback:
                self._copies.update({key: why for key in self._copies
                                     if key[0] == database.path.name})
                self._fallback.close()
                self._fallback = None
            else:
                self._mark(database.path.name, f"index {database.path.name} {why}")
            self._signature = _UNSEEN

    def _mark(self, name: str, why: str) -> None:
        self._damaged[name] = why
        try:
            self.layout.write_damage(name, why)
        except StoreError:
            pass  # a read-only folder: this process knows, and says so in check_current
        self._signature = _UNSEEN

    # -- the last-good copy ------------------------------------------------------------

    def _open_fallback(self, problems: list[str]) -> None:
        if self._fallback is not None:
            return
        try:
            record = self.layout.read_last_good()
            path = self.layout.dir / record.file if record is not None else None
            key = stat_key(path) if path is not None else None
        except StoreError as exc:
            problems.append(str(exc))
            return
        if record is None or key is None:
            return
        key = (record.file, *key)
        if key not in self._copies:
            self._copies[key] = verified(path, record.size, record.sha256)
        if self._copies[key] != "ok":
            problems.append(self._copies[key])
            return
        self._fallback = Database(path, immutable=True,
                                  on_damage=lambda why: self._retire(self._fallback, why))

    def _serving_copy(self) -> str:
        try:
            record = self.layout.read_last_good()
        except StoreError:
            record = None
        built = f" (generation {record.generation}, built {record.created})" if record else ""
        return f"serving the last good copy of the index{built} until a refresh rebuilds it"

