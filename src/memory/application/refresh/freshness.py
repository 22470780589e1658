"""FreshnessPolicy: keep the served index in step with the Markdown root (read-your-writes).

With a change feed, edits are indexed in the background as they happen and a search only
looks at an in-memory set of pending paths. Without one, a search re-scans the root at
most once a second. Either way, small edits the index lacks are indexed before the search
when that fits a small time budget; big notes, a missing index and the graph after notes
came or went are left to a background thread; the packet's `freshness` says what happened.
A one-shot command (`background` off) leaves that to `refresh`, and says so.
"""

from __future__ import annotations

import logging
import threading

from attrs import frozen

from memory.application.refresh.background import BackgroundRefresher
from memory.application.refresh.catch_up import (CatchUp, CatchUpOutcome, CatchUpRunner,
                                                 log_catch_up)
from memory.application.refresh.verdict import (CURRENT, Verdict, building, judge,
                                                no_index_yet, not_indexed)
from memory.application.refresh.indexer import Indexer
from memory.domain.cancellation import CancelToken
from memory.domain.errors import AiMemoryError
from memory.domain.freshness import Freshness
from memory.domain.refresh import GenerationInfo, RefreshReport
from memory.ports.change_feed import ChangeFeed
from memory.ports.clock import Clock
from memory.ports.embedder import Embedder
from memory.ports.index_generations import IndexGenerations
from memory.ports.note_source import NoteSource
from memory.ports.refresh_progress import RefreshProgressBoard

log = logging.getLogger(__name__)


@frozen(kw_only=True)
class FreshnessConfig:
    check_interval_s: float = 1.0  # without a feed: at most one root scan per interval
    stale_retry_s: float = 5.0  # after a stale verdict, searches reuse it this long
    search_budget_s: float = 5.0  # longest a search waits for edits to be indexed
    max_search_files: int = 100  # more changed notes than this are left to the background
    background_budget_s: float = 600.0  # how long the watcher retries while others refresh
    background_pause_s: float = 1.0  # between its tries, the watcher lets searches in
    big_note_bytes: int = 256 * 1024  # notes this big are indexed after the small ones
    graph_debounce_s: float = 10.0  # the graph follows moved notes after this much quiet
    background: bool = True  # False in a one-shot command: no thread to die with the process


class FreshnessPolicy:
    """Decides before each search whether the index must catch up with the root first."""

    def __init__(self, *, source: NoteSource, index: IndexGenerations, indexer: Indexer,
                 embedder: Embedder, clock: Clock, feed: ChangeFeed | None = None,
                 config: FreshnessConfig | None = None,
                 board: RefreshProgressBoard | None = None):
        self._source = source
        self._index = index
        self._indexer = indexer
        self._clock = clock
        self._feed = feed
        self._board = board
        self.config = c = config or FreshnessConfig()
        self._state = threading.Lock()  # guards the fields below
        self._pending: dict[str, int] = {}  # path -> sequence number of the burst naming it
        self._sequence = 0
        self._checked_at: float | None = None
        self._verdict: Verdict = CURRENT
        self._root_notes: tuple[float, int] | None = None  # (counted at, notes) with no index
        self._watching = False
        self._stopped = False
        self._stop = threading.Event()  # wakes the watcher's retry pauses on stop()
        self._runner = CatchUpRunner(source=source, index=index, indexer=indexer,
                                     embedder=embedder, clock=clock,
                                     big_note_bytes=c.big_note_bytes,
                                     stopped=lambda: self._stopped)
        self._worker = BackgroundRefresher(index_job=self._index_job, graph_job=self._graph_job,
                                           clock=clock, graph_debounce_s=c.graph_debounce_s,
                                           retry_pause_s=c.background_pause_s)

    @property
    def watching(self) -> bool:
        """True while a change feed reports edits (else searches scan the root)."""
        return self._watching and self._feed is not None and self._feed.alive()

    # -- lifecycle -----------------------------------------------------------------------

    def start(self) -> None:
        """Watch the root (when there is a feed), then index edits made while none watched."""
        if self._feed is None or self._watching or self._stopped:
            return
        try:
            self._feed.start(self._on_change)
        except AiMemoryError as exc:
            log.warning("not watching the memory root (%s); searches check it instead", exc)
            return
        self._watching = True
        log.info("watching %s for note changes", self._source.root)
        self._background()

    def stop(self) -> None:
        self._stopped = True
        self._stop.set()
        if self._feed is not None:
            self._feed.stop()
        self._watching = False
        self._worker.stop()

    # -- before each search --------------------------------------------------------------

    def before_search(self) -> Verdict:
        """The verdict for the packet, after indexing pending edits if they fit."""
        now = self._clock.monotonic()
        before = self._index.current()
        early = self._without_index(now) if before is None else self._reused_verdict(now)
        if early is not None:
            return early
        budget = self.config.search_budget_s
        deadline = self._runner.join_deadline(now + budget, budget)
        result = self._catch_up(deadline, self.config.max_search_files)
        if result.held and self.config.background:
            self._worker.request_index()
        after = self._index.current()
        if after is None:  # not built inside the search: the model loading, a lock held
            log_catch_up(result)
            verdict = self._not_indexed(result.changed or len(self._source.scan().files))
        else:
            verdict = judge(result, changed_generation=_id(after) != _id(before),
                            watching=self.watching,
                            progress=self._board.read() if self._board is not None else None,
                            background=self.config.background)
        with self._state:
            self._verdict = verdict
        return verdict

    def _reused_verdict(self, now: float) -> Verdict | None:
        """The answer without looking at the root, or None when it must be looked at."""
        with self._state:
            stale = self._verdict.freshness is Freshness.STALE
            interval = self.config.stale_retry_s if stale else self.config.check_interval_s
            recent = self._checked_at is not None and now - self._checked_at < interval
            if self.watching:
                if not self._pending and not (self._feed is not None and self._feed.settling()):
                    return CURRENT
                if recent and stale:
                    return self._verdict
            elif recent:
                return self._verdict if stale else CURRENT
            self._checked_at = now
        return None

    def _without_index(self, now: float) -> Verdict | None:
        """No index at all (never built, or its folder deleted): say so, and build it; None
        when the root is small enough for a server to build it inside this search."""
        progress = self._board.read() if self._board is not None else None
        if progress is not None:
            return building(progress)
        counted = self._root_notes
        if counted is None or now - counted[0] >= self.config.check_interval_s:
            counted = self._root_notes = (now, len(self._source.scan().files))
        notes = counted[1]
        if notes == 0:
            return CURRENT
        if notes <= self.config.max_search_files and self.config.background:
            return None
        return self._not_indexed(notes)

    def _not_indexed(self, notes: int) -> Verdict:
        """The background builds the missing index; a one-shot command leaves it to refresh
        (a first build shows its progress there)."""
        if not self.config.background:
            return not_indexed(notes)
        self._worker.request_index()
        return no_index_yet(notes)

    def published(self, report: RefreshReport) -> None:
        """A refresh this server made apart from its catch-ups (a write's one-note index):
        the graph follows when it added or removed notes, as after a catch-up."""
        if CatchUp(outcome=CatchUpOutcome.REFRESHED, report=report).moved_notes:
            self._worker.request_graph()

    # -- the change feed -----------------------------------------------------------------

    def _on_change(self, paths: frozenset[str]) -> None:
        """Runs on the feed's thread: note the burst, then index it (before any long job)."""
        with self._state:
            self._sequence += 1
            for path in paths:
                self._pending[path] = self._sequence
        self._worker.preempt()
        if not self._stopped:
            self._background()

    def _background(self) -> None:
        """Index pending small edits, retrying while another process refreshes or the model
        loads; big notes go to the background thread.

        Each try holds this server's refresh mutex for one search budget at most, so that
        searches meanwhile are not held up for the whole wait.
        """
        give_up = self._clock.monotonic() + self.config.background_budget_s
        while True:
            result = self._catch_up(self._clock.monotonic() + self.config.search_budget_s, None)
            if not result.outcome.worth_retrying or self._stopped \
                    or self._clock.monotonic() >= give_up:
                break
            self._stop.wait(self.config.background_pause_s)
        if result.held:
            self._worker.request_index()
        log_catch_up(result)

    # -- the background thread's jobs ----------------------------------------------------

    def _index_job(self, cancel: CancelToken) -> bool:
        """Small notes first, then the big ones; False (try again) when interrupted."""
        deadline = self._clock.monotonic() + self.config.background_budget_s
        for big in (False, True):
            result = self._catch_up(deadline, None, big=big, cancel=cancel)
            log_catch_up(result)
            if result.outcome.worth_retrying or result.outcome is CatchUpOutcome.CANCELLED:
                return self._stopped
            if not result.held:
                return True
        return True

    def _graph_job(self, cancel: CancelToken) -> bool:
        """Rebuild the graph when notes came or went since it was built."""
        lag = self._indexer.graph_lag()
        if lag is None or not lag.moved:
            return True
        result = self._runner.run_graph(cancel, self.config.background_budget_s)
        log.info("graph follows the index (%s): %s", lag.describe(), result.detail)
        return result.outcome not in (CatchUpOutcome.CANCELLED, CatchUpOutcome.BUSY) \
            or self._stopped

    def _catch_up(self, deadline: float, max_files: int | None, *, big: bool = False,
                  cancel: CancelToken | None = None) -> CatchUp:
        with self._state:
            sequence, pending = self._sequence, len(self._pending)
        result = self._runner.run(deadline, max_files, big=big, cancel=cancel, pending=pending)
        if result.outcome.caught_up:
            with self._state:
                self._pending = {p: s for p, s in self._pending.items()
                                 if s > sequence or p in result.held}
        if result.moved_notes and self.config.background:
            self._worker.request_graph()
        return result


def _id(info: GenerationInfo | None) -> str | None:
    return info.id if info is not None else None
