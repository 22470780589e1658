"""Collecting the index folder: superseded databases and copies, crashed stages, temp files."""

from __future__ import annotations

import logging
import os
import time
from datetime import datetime, timezone
from pathlib import Path

from memory.adapters.sqlite.layout import COPY_FILE, OLD_FILE, IndexLayout, Pointer
from memory.ports.errors import StoreError

log = logging.getLogger(__name__)


class Collector:
    """What no reader needs any more, removed once `grace_seconds` old."""

    def __init__(self, layout: IndexLayout):
        self._layout = layout

    def collect(self, grace_seconds: float) -> list[str]:
        """Remove superseded database files, crashed stages and temp files once they are
        `grace_seconds` old (a reader that just read the previous CURRENT can still open
        its file), superseded last-good copies, old-layout files and a stale DAMAGED."""
        now, grace = time.time(), max(0.0, grace_seconds)
        try:
            pointer = self._layout.read_pointer()
        except StoreError:
            return []  # nothing to compare with: remove nothing
        removed: list[str] = []
        newer_since = now
        for database in self._layout.databases():  # newest first
            if pointer is not None and database.id == pointer.database:
                newer_since = _time_of(database.id) or now
                continue
            since = newer_since if pointer is not None and database.id < pointer.database \
                else _mtime(database.path)
            newer_since = _time_of(database.id) or newer_since
            if now - since >= grace:
                self._remove(database.path, removed)
                for suffix in ("-wal", "-shm"):
                    _unlink(Path(f"{database.path}{suffix}"))
        self._collect_files(pointer, now, grace, removed)
        return removed

    def _collect_files(self, pointer: Pointer | None, now: float, grace: float,
                       removed: list[str]) -> None:
        staged = sorted(self._layout.staging.iterdir()) if self._layout.staging.is_dir() else []
        temps = [p for p in self._layout.dir.glob(".*.tmp")] if self._layout.dir.is_dir() else []
        for path in staged + temps:
            if path.is_file() and now - _mtime(path) >= grace:
                self._remove(path, removed)
        old = self._layout.files(OLD_FILE) if pointer is not None else []
        if old:
            log.warning("the index in %s was rebuilt from the notes: %d generation files of "
                        "an older ai-memory are removed", self._layout.dir, len(old))
        for path in old:
            self._remove(path, removed)
        if pointer is not None:
            marker = self._layout.read_damage()
            if marker is not None and marker.get("file") not in (pointer.file, None):
                self._layout.clear_damage()
        try:
            record = self._layout.read_last_good()
        except StoreError:
            return
        if record is not None and now - _mtime(self._layout.last_good_record) >= grace:
            for path in self._layout.files(COPY_FILE):
                if path.name != record.file:
                    _unlink(path)

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

def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except FileNotFoundError:
        return time.time()


def _unlink(path: Path) -> None:
    try:
        path.unlink(missing_ok=True)
    except OSError:
        pass  # a side file (-wal, -shm, an old copy): the next collect tries again


def _time_of(database_id: str) -> float | None:
    try:
        when = datetime.strptime(database_id[:16], "%Y%m%dT%H%M%SZ")
    except ValueError:
        return None
    return when.replace(tzinfo=timezone.utc).timestamp()
