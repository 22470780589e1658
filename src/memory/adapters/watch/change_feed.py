"""WatchfilesChangeFeed: Markdown edits under the root, in debounced bursts, on a thread.

watchfiles (Rust `notify`: inotify, FSEvents, ReadDirectoryChangesW) groups raw events
until `step_ms` pass without one; this feed then waits for `quiet_ms` more of silence
(at most `max_burst_s` in all) so that a git pull or a sync client writing hundreds of
files is reported once. Events that arrive while the callback runs are kept by
watchfiles and form the next burst.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

from watchfiles import Change, watch

from memory.domain.errors import Unavailable
from memory.domain.notes import is_markdown
from memory.ports.change_feed import ChangeFeed

log = logging.getLogger(__name__)

OnChange = Callable[[frozenset[str]], None]


class WatchfilesChangeFeed(ChangeFeed):
    """Watches `root` recursively; reports note paths relative to it, with forward slashes."""

    def __init__(self, root: str | os.PathLike[str], state_dir: str | os.PathLike[str] | None = None,
                 *, step_ms: int = 50, quiet_ms: int = 200, max_burst_s: float = 2.0,
                 start_timeout_s: float = 10.0, stop_timeout_s: float = 5.0):
        self._root = os.path.realpath(os.fspath(root))
        self._state_dir = os.path.realpath(os.fspath(state_dir)) if state_dir else None
        self._step_ms, self._quiet_ms, self._max_burst_s = step_ms, quiet_ms, max_burst_s
        self._start_timeout_s, self._stop_timeout_s = start_timeout_s, stop_timeout_s
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._thread: threading.Thread | None = None
        self._failure: str | None = None
        self._settling = False

    # -- the port ------------------------------------------------------------------------

    def start(self, on_change: OnChange) -> None:
        if self._thread is not None:
            return
        self._thread = threading.Thread(target=self._run, args=(on_change,),
                                        name="ai-memory-watch", daemon=True)
        self._thread.start()
        if not self._ready.wait(self._start_timeout_s):
            self.stop()
            raise Unavailable(f"watching {self._root} did not start within "
                              f"{self._start_timeout_s:g}s")
        if self._failure:
            raise Unavailable(f"cannot watch {self._root}: {self._failure}")

    def settling(self) -> bool:
        return self._settling

    def alive(self) -> bool:
        thread = self._thread
        return thread is not None and thread.is_alive() and not self._stop.is_set()

    def stop(self) -> None:
        self._stop.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(self._stop_timeout_s)

    # -- the watching thread -------------------------------------------------------------

    def _run(self, on_change: OnChange) -> None:
        burst: set[str] = set()
        began = 0.0
        try:
            # rust_timeout doubles as the quiet period: an empty yield means it was quiet.
            for changes in watch(self._root, watch_filter=self._wanted, step=self._step_ms,
                                 rust_timeout=self._quiet_ms, yield_on_timeout=True,
                                 stop_event=self._stop, raise_interrupt=False, debug=False,
                                 ignore_permission_denied=True):
                self._ready.set()
                if changes:
                    if not burst:
                        began = time.monotonic()
                    burst.update(self._relative(path) for _, path in changes)
                    self._settling = True
                    if time.monotonic() - began < self._max_burst_s:
                        continue
                if burst:
                    self._deliver(on_change, frozenset(burst))
                    burst.clear()
                self._settling = False
        except Exception as exc:  # noqa: BLE001 - the feed dies, the server keeps serving
            self._failure = f"{type(exc).__name__}: {exc}"
            log.warning("watching %s stopped: %s", self._root, self._failure)
        finally:
            self._settling = False
            self._ready.set()

    def _deliver(self, on_change: OnChange, paths: frozenset[str]) -> None:
        try:
            on_change(paths)
        except Exception:  # noqa: BLE001 - one failed refresh must not end the watching
            log.warning("handling %d changed notes failed", len(paths), exc_info=True)

    def _relative(self, path: str) -> str:
        return Path(os.path.relpath(path, self._root)).as_posix()

    def _wanted(self, change: Change, path: str) -> bool:
        """Markdown files and folders (a moved folder moves its notes) outside hidden folders."""
        rel = os.path.relpath(path, self._root)
        if rel == "." or rel.startswith(".."):
            return False
        if any(part.startswith(".") for part in Path(rel).parts):
            return False  # .ai-memory, .git, .obsidian, .trash, editor swap files
        if self._state_dir and (path == self._state_dir
                                or path.startswith(self._state_dir + os.sep)):
            return False
        name = os.path.basename(path)
        if is_markdown(name):
            return True
        if change == Change.deleted:
            return "." not in name  # a folder may have gone; its notes went with it
        return os.path.isdir(path)
