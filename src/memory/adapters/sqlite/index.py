"""SqliteIndex: the shared reader that follows the CURRENT pointer across processes."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import apsw

from memory.adapters.sqlite.connection import open_published
from memory.adapters.sqlite.layout import IndexLayout, Pointer
from memory.adapters.sqlite.view import GenerationView
from memory.ports.errors import StoreError

_UNSEEN = object()
# Errors that mean the file itself is damaged, as opposed to a bad query.
_DAMAGE = (apsw.CorruptError, apsw.NotADBError, apsw.IOError, apsw.CantOpenError)


class SqliteIndex:
    """Serves the generation CURRENT names, switching when another process publishes.

    One lock guards the open connection: MCP handlers may call from worker threads,
    and a generation is only closed while no reader is inside `reading()`.
    """

    def __init__(self, state_dir: str | os.PathLike[str]):
        self.layout = IndexLayout(state_dir)
        self._lock = threading.RLock()
        self._view: GenerationView | None = None
        self._signature: object = _UNSEEN
        self._problems: list[str] = []
        self._broken: dict[str, str] = {}  # generation id -> why it failed while reading
        self._integrity: dict[tuple, str] = {}  # (path, stat) -> quick_check result
        self._steady = threading.local()

    def refresh_view(self) -> GenerationView | None:
        """The generation to read now; re-reads CURRENT only when its stat changed."""
        with self._lock:
            if self._view is not None and getattr(self._steady, "depth", 0):
                return self._view
            if self._view is not None and self._view.changed_on_disk():
                self._retire(self._view, f"index generation {self._view.id} changed on disk "
                                         f"after it was published")
            signature = self.layout.pointer_signature()
            if self._view is not None and signature == self._signature:
                return self._view
            self._signature = signature
            problems: list[str] = []
            try:
                pointer = self.layout.read_pointer()
            except StoreError as exc:
                pointer = None
                problems.append(str(exc))
            if pointer is not None and (self._view is None or self._view.id != pointer.id):
                self._open_pointed(pointer, problems)
            if pointer is None and self._view is not None and not self._view.path.exists():
                # The state folder was deleted under a long-running process: the open file
                # is gone for good, and refreshing must rebuild rather than stage from it.
                self._view.close()
                self._view = None
            if pointer is None and self._view is not None and not problems:
                problems.append("index pointer CURRENT is missing")
            if self._view is None:
                self._open_fallback(pointer, problems)
            self._problems = problems
            return self._view

    @contextmanager
    def steady(self) -> Iterator[None]:
        """Reads in this thread skip the two stats (pointer, file) each of them costs:
        a search makes ~100 reads, and the service checks the generation after it."""
        self._steady.depth = getattr(self._steady, "depth", 0) + 1
        try:
            yield
        finally:
            self._steady.depth -= 1

    @contextmanager
    def reading(self) -> Iterator[GenerationView | None]:
        """Hold the current view for a few queries; a read failure retires that view."""
        with self._lock:
            view = self.refresh_view()
            try:
                yield view
            except _DAMAGE as exc:
                if view is not None:
                    self._retire(view, f"index generation {view.id} failed while reading: {exc}")
                raise StoreError(f"index read failed: {exc}") from exc
            except apsw.Error as exc:
                # Some damage reads as a plain error (sqlite-vec: "blob read error"); a
                # published file never changes, so a failing check means it is damaged.
                if view is not None and self._quick_check(view.path) != "ok":
                    self._retire(view, f"index generation {view.id} failed while reading: {exc}")
                raise StoreError(f"index read failed: {exc}") from exc

    def check_current(self) -> list[str]:
        """Pointer problems plus a quick_check of the pointed file (cached per file stat)."""
        with self._lock:
            view = self.refresh_view()
            problems = list(self._problems)
            target = self._pointed_path()
            if target is not None and target.exists():
                result = self._quick_check(target)
                if result != "ok":
                    problems.append(f"index generation {target.name} failed its check: {result}")
            if view is not None and view.id in self._broken:
                problems.append(self._broken[view.id])
            return list(dict.fromkeys(problems))

    def invalidate(self) -> None:
        """Forget the pointer stat so the next read re-reads CURRENT (after our own publish)."""
        with self._lock:
            self._signature = _UNSEEN

    def close(self) -> None:
        with self._lock:
            if self._view is not None:
                self._view.close()
                self._view = None
            self._signature = _UNSEEN

    # -- internals ---------------------------------------------------------------------

    def _open_pointed(self, pointer: Pointer, problems: list[str]) -> None:
        if pointer.id in self._broken:
            problems.append(self._broken[pointer.id])
            return
        path = self.layout.dir / pointer.file
        if not path.is_file():
            problems.append(f"index pointer names a missing file {pointer.file}")
            return
        if not self._as_published(pointer, path):
            result = self._quick_check(path)  # changed since its publish: damage, or a copy
            if result != "ok":
                why = f"index generation {pointer.id} failed its check: {result}"
                self._broken[pointer.id] = why
                problems.append(why)
                return
        try:
            view = GenerationView(pointer.id, path)
        except StoreError as exc:
            problems.append(str(exc))
            return
        if self._view is not None:
            self._view.close()
        self._view = view

    def _open_fallback(self, pointer: Pointer | None, problems: list[str]) -> None:
        """Nothing open and CURRENT unusable: serve the newest older file that opens."""
        for gen in self.layout.generations():
            if gen.id in self._broken or (pointer is not None and gen.id == pointer.id):
                continue
            result = self._quick_check(gen.path)  # nothing vouches for an older file
            if result != "ok":
                self._broken[gen.id] = f"index generation {gen.id} failed its check: {result}"
                problems.append(f"older index generation {gen.id} is unusable too: {result}")
                continue
            try:
                self._view = GenerationView(gen.id, gen.path)
            except StoreError as exc:
                problems.append(f"older index generation {gen.id} is unusable too: {exc}")
                continue
            if pointer is not None or problems:
                problems.append(f"serving older index generation {gen.id} instead")
            else:
                problems.append(f"index pointer CURRENT is missing; serving {gen.id}")
            return

    def _retire(self, view: GenerationView, why: str) -> None:
        self._broken[view.id] = why
        if self._view is view:
            view.close()
            self._view = None
            self._signature = _UNSEEN

    @staticmethod
    def _as_published(pointer: Pointer, path: Path) -> bool:
        """Whether the file has the size and mtime CURRENT recorded when it was published."""
        if pointer.size is None or pointer.mtime_ns is None:
            return False
        try:
            st = os.stat(path)
        except OSError:
            return False
        return (st.st_size, st.st_mtime_ns) == (pointer.size, pointer.mtime_ns)

    def _pointed_path(self) -> Path | None:
        try:
            pointer = self.layout.read_pointer()
        except StoreError:
            return None
        return self.layout.dir / pointer.file if pointer else None

    def _quick_check(self, path: Path) -> str:
        try:
            st = os.stat(path)
        except OSError as exc:
            return str(exc)
        key = (str(path), st.st_ino, st.st_mtime_ns, st.st_size)
        if key not in self._integrity:
            try:
                conn = open_published(path, vec=False)
                try:
                    rows = conn.execute("PRAGMA quick_check").fetchall()
                finally:
                    conn.close()
                self._integrity[key] = "; ".join(str(r[0]) for r in rows[:5])
            except (apsw.Error, StoreError) as exc:
                self._integrity[key] = str(exc)
        return self._integrity[key]
