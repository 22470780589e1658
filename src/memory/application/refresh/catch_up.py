"""CatchUpRunner: index what the root changed since the current generation, one run at a time.

Small notes go first: a run that leaves out the big ones (`big=False`) costs a small edit
about a second even while a 200k-line note waits; a run that takes them (`big=True`) can
be cancelled by newer small edits and taken again after them (the embedding cache keeps
the vectors it had made).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from enum import StrEnum

from attrs import field, frozen

from memory.application.refresh.indexer import Indexer
from memory.domain.cancellation import CancelToken, Cancelled
from memory.domain.errors import AiMemoryError, RefreshBusy
from memory.domain.refresh import (RefreshMode, RefreshReport, SourceFile, Stage, StageOutcome,
                                   diff_scan)
from memory.ports.clock import Clock
from memory.ports.embedder import Embedder
from memory.ports.index_generations import IndexGenerations
from memory.ports.note_source import NoteSource

log = logging.getLogger(__name__)


class CatchUpOutcome(StrEnum):
    """How one attempt to index the root's pending edits ended."""

    NOTHING = "nothing"  # no edit was pending
    REFRESHED = "refreshed"  # a refresh ran (its report says whether it published)
    BUSY = "busy"  # another refresh held the mutex or the lock past the deadline
    TOO_MANY = "too-many"  # more edits than a search may index: left to the background
    MODEL_LOADING = "model-loading"  # the embedding model was not ready in time
    FAILED = "failed"
    CANCELLED = "cancelled"  # newer edits interrupted it

    @property
    def caught_up(self) -> bool:
        """The edits pending when it started were taken (or there were none)."""
        return self in (CatchUpOutcome.NOTHING, CatchUpOutcome.REFRESHED)

    @property
    def worth_retrying(self) -> bool:
        """It only waited on something that passes: another refresh, the model loading."""
        return self in (CatchUpOutcome.BUSY, CatchUpOutcome.MODEL_LOADING)


@frozen(kw_only=True)
class CatchUp:
    """What one attempt to index the root's pending edits did."""

    outcome: CatchUpOutcome = field(converter=CatchUpOutcome)
    changed: int = 0
    report: RefreshReport | None = None
    detail: str = ""
    held: tuple[str, ...] = ()  # big notes left for a run of their own

    @property
    def moved_notes(self) -> bool:
        """The refresh added or removed notes (a move is both): the graph has to follow."""
        stage = self.report.stage(Stage.INDEX) if self.report else None
        return stage is not None and stage.outcome is StageOutcome.PUBLISHED and bool(
            stage.added or stage.removed)


class CatchUpRunner:
    def __init__(self, *, source: NoteSource, index: IndexGenerations, indexer: Indexer,
                 embedder: Embedder, clock: Clock, big_note_bytes: int,
                 stopped: Callable[[], bool]):
        self._source = source
        self._index = index
        self._indexer = indexer
        self._embedder = embedder
        self._clock = clock
        self._big = big_note_bytes
        self._stopped = stopped
        self._mutex = threading.Lock()  # one catch-up at a time in this process
        self._holder: tuple[float, bool] | None = None  # (started, takes big notes)
        self._unindexable: dict[str, SourceFile | None] = {}

    def join_deadline(self, deadline: float, budget: float) -> float:
        """How long a search may wait for the run under way: not at all for one taking big
        notes, and a small one only until it is `budget` old."""
        holder = self._holder
        if holder is None:
            return deadline
        started, big = holder
        return self._clock.monotonic() if big else min(deadline, started + budget)

    def run(self, deadline: float, max_files: int | None, *, big: bool,
            cancel: CancelToken | None = None, pending: int = 0) -> CatchUp:
        """Index the root's edits if the mutex and the lock are had before deadline."""
        return self._holding(deadline, big, pending,
                             lambda: self._run_locked(deadline, max_files, big, cancel))

    def run_graph(self, cancel: CancelToken, budget: float) -> CatchUp:
        """Rebuild the graph alone, under the mutex like any catch-up (searches never wait)."""
        deadline = self._clock.monotonic() + budget
        return self._holding(deadline, True, 0, lambda: self._graph_locked(cancel, deadline))

    def _holding(self, deadline: float, big: bool, pending: int,
                 work: Callable[[], CatchUp]) -> CatchUp:
        if not self._mutex.acquire(timeout=max(0.0, deadline - self._clock.monotonic())):
            return CatchUp(outcome=CatchUpOutcome.BUSY, changed=pending,
                           detail="a refresh in this server is still running")
        self._holder = (self._clock.monotonic(), big)
        try:
            return work()
        except Cancelled as exc:
            return CatchUp(outcome=CatchUpOutcome.CANCELLED, changed=pending, detail=str(exc))
        except AiMemoryError as exc:
            return CatchUp(outcome=CatchUpOutcome.FAILED, changed=pending, detail=str(exc))
        finally:
            self._holder = None
            self._mutex.release()

    def _graph_locked(self, cancel: CancelToken, deadline: float) -> CatchUp:
        while True:
            try:
                report = self._indexer.refresh_graph(cancel)
            except RefreshBusy as exc:
                if self._stopped() or self._clock.monotonic() >= deadline:
                    return CatchUp(outcome=CatchUpOutcome.BUSY, detail=str(exc))
                continue
            stage = report.stage(Stage.GRAPH)
            return CatchUp(outcome=CatchUpOutcome.REFRESHED, report=report,
                           detail=f"{stage.outcome} {stage.reason}".strip() if stage else "")

    def _run_locked(self, deadline: float, max_files: int | None, big: bool,
                    cancel: CancelToken | None) -> CatchUp:
        while True:
            changed = self.changed()
            held = () if big else tuple(sorted(
                p for p, f in changed.items() if f is not None and f.size > self._big))
            todo = len(changed) - len(held)
            if not todo:
                return CatchUp(outcome=CatchUpOutcome.NOTHING, held=held)
            if max_files is not None and todo > max_files:
                return CatchUp(outcome=CatchUpOutcome.TOO_MANY, changed=todo)
            if not self._model_ready(deadline):
                return CatchUp(outcome=CatchUpOutcome.MODEL_LOADING, changed=todo)
            try:
                report = self._indexer.refresh(RefreshMode.INDEX, cancel=cancel, hold_back=held)
            except RefreshBusy as exc:
                # Another process is refreshing: it may be indexing these very edits.
                wait = self._indexer.policy.lock_timeout_s
                if self._stopped() or self._clock.monotonic() + wait > deadline:
                    return CatchUp(outcome=CatchUpOutcome.BUSY, changed=todo, detail=str(exc))
                continue
            stage = report.stage(Stage.INDEX)
            self._remember_unindexable(changed, held, kept=stage is not None and not stage.ok)
            return CatchUp(outcome=CatchUpOutcome.REFRESHED, changed=todo, report=report, held=held,
                           detail=stage.reason if stage else "")

    def changed(self) -> dict[str, SourceFile | None]:
        """Paths whose stat differs from the current manifest, less known-unindexable files."""
        current = self._index.current()
        scan = self._source.scan()
        diff = diff_scan(current.manifest if current else {}, scan.files)
        paths = (*diff.added, *diff.suspect, *diff.removed)
        return {p: scan.files.get(p) for p in paths
                if not (p in self._unindexable and self._unindexable[p] == scan.files.get(p))}

    def _remember_unindexable(self, changed: dict[str, SourceFile | None], held: tuple[str, ...],
                              kept: bool) -> None:
        """Files a refresh could not index are not news again until their stat moves.

        That is an existing file the new manifest lacks (not UTF-8, unreadable), or every
        changed file when validation kept the last good generation: retrying each search
        would fail the same way. Held-back notes are neither: their turn comes later.
        """
        current = self._index.current()
        manifest = current.manifest if current else {}
        self._unindexable.update({p: f for p, f in changed.items()
                                  if f is not None and p not in held
                                  and (kept or p not in manifest)})

    def _model_ready(self, deadline: float) -> bool:
        if self._embedder.state().settled:
            return True  # a failed model: the indexer builds without vectors at once
        return self._embedder.wait_ready(max(0.0, deadline - self._clock.monotonic()))


def log_catch_up(result: CatchUp) -> None:
    if result.outcome is CatchUpOutcome.REFRESHED:
        stage = result.report.stage(Stage.INDEX) if result.report else None
        log.info("watch: %d changed notes -> index %s (%s)", result.changed,
                 stage.generation if stage else None, stage.outcome if stage else "?")
    elif result.outcome is not CatchUpOutcome.NOTHING:
        log.warning("watch: %d changed notes not indexed (%s: %s)", result.changed,
                    result.outcome, result.detail)
