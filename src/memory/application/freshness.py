"""FreshnessPolicy: keep the served index in step with the Markdown root (read-your-writes).

With a change feed, edits are indexed in the background as they happen and a search only
looks at an in-memory set of pending paths. Without one, a search re-scans the root at
most once a second. Either way, edits the index lacks are indexed before the search when
that fits a small time budget, and the packet's `freshness` says what happened.
"""

from __future__ import annotations

import logging
import threading

from attrs import frozen

from memory.application.indexer import Indexer
from memory.domain.errors import AiMemoryError, RefreshBusy
from memory.domain.refresh import RefreshReport, SourceFile, diff_scan
from memory.ports.change_feed import ChangeFeed
from memory.ports.clock import Clock
from memory.ports.embedder import Embedder
from memory.ports.index_generations import IndexGenerations
from memory.ports.journal import RefreshHistory
from memory.ports.note_source import NoteSource

log = logging.getLogger(__name__)

CURRENT = "current"
REFRESHED = "refreshed-before-search"
STALE = "stale"

Verdict = tuple[str, tuple[str, ...]]


@frozen(kw_only=True)
class FreshnessConfig:
    check_interval_s: float = 1.0  # without a feed: at most one root scan per interval
    stale_retry_s: float = 5.0  # after a stale verdict, searches reuse it this long
    search_budget_s: float = 5.0  # longest a search waits for edits to be indexed
    max_search_files: int = 100  # more changed notes than this are left to the background
    background_budget_s: float = 600.0  # how long the watcher retries while others refresh
    background_pause_s: float = 1.0  # between its tries, the watcher lets searches in


@frozen(kw_only=True)
class CatchUp:
    """What one attempt to index the root's pending edits did."""

    outcome: str  # nothing | refreshed | busy | too-many | model-loading | failed
    changed: int = 0
    report: RefreshReport | None = None
    detail: str = ""


class ChangesOnlyHistory(RefreshHistory):
    """The refresh history as the server's own refreshes write it: only when they changed
    something. Several servers noticing the same edit leave one record, not one each."""

    def __init__(self, history: RefreshHistory):
        self._history = history

    def append(self, record) -> None:
        if any(stage.get("outcome") != "unchanged" for stage in record.get("stages", ())):
            self._history.append(record)

    def last(self):
        return self._history.last()


class FreshnessPolicy:
    """Decides before each search whether the index must catch up with the root first."""

    def __init__(self, *, source: NoteSource, index: IndexGenerations, indexer: Indexer,
                 embedder: Embedder, clock: Clock, feed: ChangeFeed | None = None,
                 config: FreshnessConfig | None = None):
        self._source = source
        self._index = index
        self._indexer = indexer
        self._embedder = embedder
        self._clock = clock
        self._feed = feed
        self.config = config or FreshnessConfig()
        self._state = threading.Lock()  # guards the fields below
        self._pending: dict[str, int] = {}  # path -> sequence number of the burst naming it
        self._sequence = 0
        self._checked_at: float | None = None
        self._verdict: Verdict = (CURRENT, ())
        self._unindexable: dict[str, SourceFile | None] = {}
        self._watching = False
        self._stopped = False
        self._stop = threading.Event()  # wakes the watcher's retry pauses on stop()
        self._refreshing = threading.Lock()  # one catch-up at a time in this process

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

    # -- before each search --------------------------------------------------------------

    def before_search(self) -> Verdict:
        """(freshness, warnings) for the packet, after indexing pending edits if they fit."""
        now = self._clock.monotonic()
        with self._state:
            stale = self._verdict[0] == STALE
            interval = self.config.stale_retry_s if stale else self.config.check_interval_s
            recent = self._checked_at is not None and now - self._checked_at < interval
            if self.watching:
                if not self._pending and not self._feed.settling():
                    return (CURRENT, ())
                if recent and stale:
                    return self._verdict
            elif recent:
                return self._verdict if stale else (CURRENT, ())
            self._checked_at = now
        before = self._index.current()
        result = self._catch_up(now + self.config.search_budget_s, self.config.max_search_files)
        verdict = self._judge(result, before.id if before else None)
        with self._state:
            self._verdict = verdict
        return verdict

    def _judge(self, result: CatchUp, before: str | None) -> Verdict:
        n = result.changed
        if result.outcome == "nothing":
            after = self._index.current()
            return (REFRESHED if (after.id if after else None) != before else CURRENT, ())
        if result.outcome == "refreshed" and result.report.ok:
            return (REFRESHED, ())
        why = {
            "refreshed": f"a refresh kept the last good index ({result.detail})",
            "busy": f"{n} changed notes are not indexed yet: {result.detail}",
            "too-many": f"{n} notes changed since the index was built; "
                        + ("they are being indexed in the background" if self.watching
                           else "run memory_refresh to index them"),
            "model-loading": f"{n} changed notes wait for the embedding model to load",
            "failed": f"changed notes could not be indexed: {result.detail}",
        }[result.outcome]
        return (STALE, (f"stale index: {why}; results may miss recent edits",))

    # -- the change feed -----------------------------------------------------------------

    def _on_change(self, paths: frozenset[str]) -> None:
        """Runs on the feed's thread: note the burst, then index it."""
        with self._state:
            self._sequence += 1
            for path in paths:
                self._pending[path] = self._sequence
        if not self._stopped:
            self._background()

    def _background(self) -> None:
        """Index pending edits, retrying while another process refreshes or the model loads.

        Each try holds this server's refresh mutex for one search budget at most, so that
        searches meanwhile are not held up for the whole wait.
        """
        give_up = self._clock.monotonic() + self.config.background_budget_s
        while True:
            result = self._catch_up(self._clock.monotonic() + self.config.search_budget_s, None)
            if result.outcome not in ("busy", "model-loading") or self._stopped \
                    or self._clock.monotonic() >= give_up:
                break
            self._stop.wait(self.config.background_pause_s)
        if result.outcome == "refreshed":
            stage = result.report.stage("index")
            log.info("watch: %d changed notes -> index %s (%s)", result.changed,
                     stage.generation if stage else None, stage.outcome if stage else "?")
        elif result.outcome != "nothing":
            log.warning("watch: %d changed notes not indexed (%s: %s)", result.changed,
                        result.outcome, result.detail)

    # -- catching up ---------------------------------------------------------------------

    def _catch_up(self, deadline: float, max_files: int | None) -> CatchUp:
        """Index what changed since the current generation, if it fits before deadline."""
        if not self._refreshing.acquire(timeout=max(0.0, deadline - self._clock.monotonic())):
            return CatchUp(outcome="busy", changed=len(self._pending),
                           detail="a refresh in this server is still running")
        try:
            with self._state:
                sequence = self._sequence
            return self._catch_up_locked(sequence, deadline, max_files)
        except AiMemoryError as exc:
            return CatchUp(outcome="failed", changed=len(self._pending), detail=str(exc))
        finally:
            self._refreshing.release()

    def _catch_up_locked(self, sequence: int, deadline: float, max_files: int | None) -> CatchUp:
        while True:
            changed = self._changed()
            if not changed:
                self._settle(sequence)
                return CatchUp(outcome="nothing")
            if max_files is not None and len(changed) > max_files:
                return CatchUp(outcome="too-many", changed=len(changed))
            if not self._model_ready(deadline):
                return CatchUp(outcome="model-loading", changed=len(changed))
            try:
                report = self._indexer.refresh("index")
            except RefreshBusy as exc:
                # Another process is refreshing: it may be indexing these very edits.
                wait = self._indexer.policy.lock_timeout_s
                if self._stopped or self._clock.monotonic() + wait > deadline:
                    return CatchUp(outcome="busy", changed=len(changed), detail=str(exc))
                continue
            stage = report.stage("index")
            self._remember_unindexable(changed, kept=stage is not None and not stage.ok)
            self._settle(sequence)
            return CatchUp(outcome="refreshed", changed=len(changed), report=report,
                           detail=stage.reason if stage else "")

    def _changed(self) -> dict[str, SourceFile | None]:
        """Paths whose stat differs from the current manifest, less known-unindexable files."""
        current = self._index.current()
        scan = self._source.scan()
        diff = diff_scan(current.manifest if current else {}, scan.files)
        paths = (*diff.added, *diff.suspect, *diff.removed)
        return {p: scan.files.get(p) for p in paths
                if not (p in self._unindexable and self._unindexable[p] == scan.files.get(p))}

    def _remember_unindexable(self, changed: dict[str, SourceFile | None], kept: bool) -> None:
        """Files a refresh could not index are not news again until their stat moves.

        That is an existing file the new manifest lacks (not UTF-8, unreadable), or every
        changed file when validation kept the last good generation: retrying each search
        would fail the same way.
        """
        current = self._index.current()
        manifest = current.manifest if current else {}
        self._unindexable.update({p: f for p, f in changed.items()
                                  if f is not None and (kept or p not in manifest)})

    def _settle(self, sequence: int) -> None:
        with self._state:
            self._pending = {p: s for p, s in self._pending.items() if s > sequence}

    def _model_ready(self, deadline: float) -> bool:
        state = self._embedder.state()
        if state == "ready" or state.startswith("failed"):
            return True  # a failed model: the indexer builds without vectors at once
        return self._embedder.wait_ready(max(0.0, deadline - self._clock.monotonic()))
