"""SqliteGenerations: start stages from the current file, report it, collect old files."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import apsw

from memory.adapters.sqlite import schema
from memory.adapters.sqlite.connection import open_private, store_errors
from memory.adapters.sqlite.index import SqliteIndex
from memory.adapters.sqlite.layout import new_generation_id
from memory.adapters.sqlite.stage import SqliteIndexStage
from memory.domain.refresh import GenerationInfo
from memory.ports.errors import StoreError
from memory.ports.index_generations import IndexGenerations


class SqliteGenerations(IndexGenerations):
    """Index generations as immutable SQLite files under <state_dir>/index/."""

    def __init__(self, index: SqliteIndex):
        self._index = index
        self._layout = index.layout

    def current(self) -> GenerationInfo | None:
        with self._index.reading() as view:
            return view.info if view is not None else None

    def stage(self, base: str | None) -> SqliteIndexStage:
        gen_id = new_generation_id()
        path = self._layout.staging_path(gen_id)
        with store_errors(f"cannot create stage {gen_id}"):
            path.parent.mkdir(parents=True, exist_ok=True)
            if base is not None:
                source = self._layout.generation_path(base)
                if not source.is_file():
                    raise StoreError(f"base index generation {base} does not exist")
                # A published file is never written again, so a plain copy is consistent.
                shutil.copyfile(source, path)
        try:
            conn = open_private(path)
            with store_errors(f"cannot prepare stage {gen_id}"):
                if base is None:
                    schema.create(conn)
                else:
                    self._check_base(conn, base)
                conn.execute("BEGIN")
        except BaseException:
            path.unlink(missing_ok=True)
            raise
        return SqliteIndexStage(self._layout, gen_id, path, conn, self._index.invalidate)

    def collect(self, keep: int, grace_seconds: float) -> list[str]:
        """Remove generations beyond the newest `keep` once superseded for grace_seconds.

        A file's age counts from when its successor was written, i.e. from when it
        stopped being current, so a reader that just opened it keeps its grace.
        """
        now_ns = time.time_ns()
        grace_ns = int(max(0.0, grace_seconds) * 1e9)
        current = self._current_file()
        serving = self._index.refresh_view()
        removed: list[str] = []
        generations = self._layout.generations()
        for i, gen in enumerate(generations):
            superseded_ns = generations[i - 1].mtime_ns if i > 0 else gen.mtime_ns
            if (i < max(0, keep) or gen.path.name == current
                    or (serving is not None and serving.id == gen.id)
                    or now_ns - superseded_ns < grace_ns):
                continue
            self._remove(gen.path, removed)
        for path, mtime_ns in self._leftovers():
            if now_ns - mtime_ns >= grace_ns:
                self._remove(path, removed)
        return removed

    def check_current(self) -> list[str]:
        return self._index.check_current()

    def steady(self):
        return self._index.steady()

    # -- internals ---------------------------------------------------------------------

    @staticmethod
    def _check_base(conn: apsw.Connection, base: str) -> None:
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        if row is None or int(row[0]) != schema.SCHEMA_VERSION:
            raise StoreError(f"base index generation {base} has schema {row and row[0]}, this "
                             f"version writes {schema.SCHEMA_VERSION}: run a full refresh")

    def _current_file(self) -> str | None:
        try:
            pointer = self._layout.read_pointer()
        except StoreError:
            return None
        return pointer.file if pointer else None

    def _leftovers(self) -> list[tuple[Path, int]]:
        """Stages of crashed refreshes and pointer temp files of crashed publishes."""
        candidates: list[Path] = []
        with store_errors("cannot list index leftovers"):
            if self._layout.staging.is_dir():
                candidates += list(self._layout.staging.iterdir())
            if self._layout.dir.is_dir():
                candidates += list(self._layout.dir.glob(".CURRENT.*.tmp"))
        found = []
        for path in candidates:
            try:
                st = path.stat()
            except FileNotFoundError:
                continue
            if path.is_file():
                found.append((path, st.st_mtime_ns))
        return found

    def _remove(self, path: Path, removed: list[str]) -> None:
        try:
            path.unlink()
        except FileNotFoundError:
            return
        except PermissionError as exc:
            # Windows refuses to delete a file another process has open; the next
            # collect tries again, so it is not reported as removed.
            if os.name == "nt":
                return
            raise StoreError(f"cannot remove {path}: {exc}") from exc
        except OSError as exc:
            raise StoreError(f"cannot remove {path}: {exc}") from exc
        removed.append(self._layout.relative(path))
