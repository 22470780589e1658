"""BackgroundRefresher: one daemon thread for the long refreshes a server makes by itself.

It takes what must not hold up a search or a small edit: big notes, a root with no index
(a deleted state folder), and the graph after notes came or went. Each job runs with a
cancel token that newer edits set (`preempt`), so a small note saved meanwhile is indexed
first and the long job starts over (its vectors so far stay in the embedding cache).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from memory.domain.cancellation import CancelToken
from memory.ports.clock import Clock

log = logging.getLogger(__name__)

Job = Callable[[CancelToken], bool]  # True: done; False: try again later


class BackgroundRefresher:
    def __init__(self, *, index_job: Job, graph_job: Job, clock: Clock,
                 graph_debounce_s: float, retry_pause_s: float):
        self._index_job = index_job
        self._graph_job = graph_job
        self._clock = clock
        self._debounce = graph_debounce_s
        self._pause = retry_pause_s
        self._wake = threading.Condition()
        self._index_due = False
        self._graph_due: float | None = None  # monotonic time the graph job may start
        self._token: CancelToken | None = None
        self._thread: threading.Thread | None = None
        self._stopped = False

    def request_index(self) -> None:
        with self._wake:
            self._index_due = True
            self._start_locked()

    def request_graph(self) -> None:
        """The graph follows once the root has been quiet for the debounce period."""
        with self._wake:
            self._graph_due = self._clock.monotonic() + self._debounce
            self._start_locked()

    def preempt(self) -> None:
        """Newer edits go first: the job under way stops at its next batch."""
        token = self._token
        if token is not None:
            token.cancel("newer edits are indexed first")

    def stop(self, timeout: float = 5.0) -> None:
        with self._wake:
            self._stopped = True
            self._wake.notify_all()
        self.preempt()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def _start_locked(self) -> None:
        if self._stopped:
            return
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._loop, name="ai-memory-background",
                                            daemon=True)
            self._thread.start()
        self._wake.notify_all()

    def _loop(self) -> None:
        while True:
            job = self._next_job()
            if job is None:
                return
            token = CancelToken()
            self._token = token
            try:
                done = job(token)
            except Exception:  # noqa: BLE001 - the thread lives on; the next request retries
                log.warning("background refresh failed", exc_info=True)
                done = True
            finally:
                self._token = None
            if not done:
                self._again(job)

    def _next_job(self) -> Job | None:
        with self._wake:
            while not self._stopped:
                if self._index_due:
                    self._index_due = False
                    return self._index_job
                now = self._clock.monotonic()
                if self._graph_due is not None and now >= self._graph_due:
                    self._graph_due = None
                    return self._graph_job
                self._wake.wait(None if self._graph_due is None else self._graph_due - now)
            return None

    def _again(self, job: Job) -> None:
        with self._wake:
            if job is self._index_job:
                self._index_due = True
            else:
                self._graph_due = self._clock.monotonic() + self._debounce
            self._wake.wait(self._pause)  # lets the edits that preempted it take the mutex
