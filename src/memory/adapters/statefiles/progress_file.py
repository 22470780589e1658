"""JsonRefreshProgress: `<state_dir>/refresh-progress.json`, how far the running refresh is.

The refreshing process rewrites it (atomically, at most every `every_s`) with its pid; a
reader ignores a record whose process is gone, so a refresh killed mid-way leaves nothing
that reads as "still building".
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from pathlib import Path

from memory.domain.refresh import BuildProgress, Stage
from memory.ports.refresh_progress import RefreshProgressBoard

log = logging.getLogger(__name__)

FILE_NAME = "refresh-progress.json"
MAX_AGE_S = 600.0  # a record this old is a dead refresh whose pid was reused


class JsonRefreshProgress(RefreshProgressBoard):
    def __init__(self, state_dir: str | os.PathLike[str], *, every_s: float = 0.5):
        self.path = Path(state_dir) / FILE_NAME
        self._every = every_s
        self._last: tuple[str, float] | None = None  # stage and time of the last write
        self._lock = threading.Lock()
        self._complained = False

    def post(self, progress: BuildProgress) -> None:
        now = time.monotonic()
        with self._lock:
            last = self._last
            if last is not None and last[0] == progress.stage and now - last[1] < self._every \
                    and progress.done < progress.total:
                return
            self._last = (progress.stage, now)
        self._write({"pid": os.getpid(), "stage": progress.stage, "done": progress.done,
                     "total": progress.total, "updated": time.time()})

    def clear(self) -> None:
        with self._lock:
            self._last = None
        record = self._load()
        if record is not None and record.get("pid") == os.getpid():
            try:
                self.path.unlink(missing_ok=True)
            except OSError as exc:
                self._complain(exc)

    def read(self) -> BuildProgress | None:
        record = self._load()
        if record is None or not _alive(record.get("pid"), record.get("updated")):
            return None
        try:
            pid, done, total = int(record["pid"]), int(record["done"]), int(record["total"])
            stage = Stage(record.get("stage"))
        except (KeyError, TypeError, ValueError):
            return None
        return BuildProgress(stage=stage, done=done, total=total,
                             pid=None if pid == os.getpid() else pid)

    def _write(self, record: dict) -> None:
        tmp = self.path.with_name(f".{FILE_NAME}.{os.getpid()}.tmp")
        try:
            tmp.write_text(json.dumps(record), encoding="utf-8")
            os.replace(tmp, self.path)
        except OSError as exc:  # advisory: a refresh never fails because of it
            self._complain(exc)
            return
        self._complained = False

    def _load(self) -> dict | None:
        try:
            record = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return record if isinstance(record, dict) else None

    def _complain(self, exc: OSError) -> None:
        if not self._complained:
            self._complained = True
            log.warning("refresh progress not shared with other processes (%s): %s",
                        self.path, exc.strerror or exc)


def _alive(pid: object, updated: object) -> bool:
    if not isinstance(pid, int) or not isinstance(updated, (int, float)):
        return False
    if time.time() - updated > MAX_AGE_S:
        return False
    if os.name != "posix":  # no signal-0 probe there: trust a recent record
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: alive
        return True
    return True
