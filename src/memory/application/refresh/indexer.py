"""Indexer: the refresh pipeline. Stage, validate, publish, or keep the last good state."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager

from attrs import evolve

from memory.application.refresh.chunk_vectors import MODEL_WAIT_S, ChunkVectors
from memory.application.refresh.graph_stage import GraphRefresh
from memory.application.refresh.id_claims import IdClaims, Vectors
from memory.application.refresh.note_paths import as_indexed, not_editable
from memory.application.refresh.checks import failures_text, validate_index
from memory.application.refresh.run import (NoteEdits, Progress, RefreshPolicy, RefreshRun,
                                           batches, read_notes)
from memory.domain.cancellation import CancelToken
from memory.domain.errors import InvalidRequest
from memory.domain.notes import NoteDocument
from memory.domain.refresh import (ASKED_MODES, GenerationInfo, GraphLag, RefreshMode,
                                   RefreshReport, SourceFile, SourceScan, Stage, StageOutcome,
                                   StageReport, diff_scan)
from memory.domain.refresh_plan import RefreshPlan, plan_refresh
from memory.ports.clock import Clock
from memory.ports.embedder import Embedder
from memory.ports.embedding_cache import EmbeddingCache
from memory.ports.errors import StoreError
from memory.ports.graph_generations import GraphGenerations
from memory.ports.index_generations import IndexGenerations, IndexStage
from memory.ports.journal import RefreshHistory
from memory.ports.lock import RefreshLock
from memory.ports.note_source import NoteSource
from memory.ports.refresh_progress import RefreshProgressBoard

__all__ = ["Indexer", "Progress", "RefreshPolicy"]


class Indexer:
    """Turns the Markdown root into published index and graph generations."""

    def __init__(self, source: NoteSource, index: IndexGenerations, embedder: Embedder,
                 cache: EmbeddingCache, lock: RefreshLock, clock: Clock,
                 history: RefreshHistory, graphs: GraphGenerations | None = None,
                 policy: RefreshPolicy | None = None, board: RefreshProgressBoard | None = None):
        self._source = source
        self._index = index
        self._embedder = embedder
        self._vectors = ChunkVectors(embedder, cache)
        self._lock = lock
        self._clock = clock
        self._history = history
        self._graphs = graphs
        self._board = board
        self.policy = policy or RefreshPolicy()
        self._graph = GraphRefresh(graphs, clock, self.policy.max_graph_shrink) if graphs else None

    def refresh(self, mode: RefreshMode = RefreshMode.INDEX, force: bool = False, progress: Progress | None = None,
                cancel: CancelToken | None = None,
                hold_back: Collection[str] = ()) -> RefreshReport:
        """Refresh the index (and with mode 'full' the graph first).

        Cancelled when `cancel` is set: the stage is discarded, the lock released. Notes in
        `hold_back` keep what the current generation holds of them (a later refresh takes
        them): the background indexes a giant note apart from the small edits.
        """
        if mode not in ASKED_MODES:
            raise InvalidRequest(f"refresh mode must be 'index' or 'full', not {mode!r}")
        full = RefreshMode(mode) is RefreshMode.FULL
        run = RefreshRun(progress, cancel, self._board)
        warnings: list[str] = []
        with self._locked(run):
            stages = [self._graph_stage(force, run)] if full else []
            run.cancel.raise_if_cancelled()
            stages.append(self._index_stage(full, force, frozenset(hold_back),
                                            warnings, run))
            self._collect(warnings)
        return self._recorded(RefreshReport(mode=mode, stages=tuple(stages),
                                            warnings=tuple(warnings)))

    def refresh_graph(self, cancel: CancelToken | None = None) -> RefreshReport:
        """Rebuild only the graph (the index stays as it is): how the graph follows edits."""
        run = RefreshRun(None, cancel, self._board)
        with self._locked(run):
            stage = self._graph_stage(False, run)
        return self._recorded(RefreshReport(mode=RefreshMode.GRAPH, stages=(stage,)))

    def refresh_paths(self, paths: Sequence[str], *, model_wait_s: float = MODEL_WAIT_S,
                      cancel: CancelToken | None = None) -> RefreshReport:
        """Index exactly these notes now, each as its file reads (a path no longer there
        leaves the index); every other note keeps what the current generation holds.

        No root scan: the cost grows with these notes. Each manifest entry is the file's
        stat as a scan sees it, taken before it is read, so the watcher then finds nothing
        to do and an edit made meanwhile is read again by the next refresh. Nothing is
        indexed (outcome SKIPPED, with why) when the current generation cannot take
        notes one at a time (see note_paths.not_editable).
        """
        run = RefreshRun(None, cancel, self._board)
        warnings: list[str] = []
        with self._locked(run):
            stage = self._paths_stage(tuple(dict.fromkeys(paths)), model_wait_s, warnings, run)
            if stage.outcome is StageOutcome.PUBLISHED:
                self._collect(warnings)
        return self._recorded(RefreshReport(mode=RefreshMode.PATHS, stages=(stage,),
                                            warnings=tuple(warnings)))

    @contextmanager
    def _locked(self, run: RefreshRun) -> Iterator[None]:
        try:
            with self._lock.hold(self.policy.lock_timeout_s, run.cancel):
                try:
                    yield
                finally:
                    run.end()  # before the next holder can post its own progress
        except OSError as exc:  # an adapter let one through: name what could not be written
            raise StoreError(f"refresh failed: {exc}") from exc

    def graph_lag(self) -> GraphLag | None:
        """How far the served graph is behind the index; None without a graph to compare."""
        index = self._index.current()
        if self._graph is None or index is None:
            return None
        return self._graph.lag({p: e.content_hash for p, e in index.manifest.items()})

    def _recorded(self, report: RefreshReport) -> RefreshReport:
        try:
            self._history.append({"time": self._clock.now_iso(), **report.as_dict()})
        except StoreError as exc:  # the refresh itself is done; only its record is missing
            return evolve(report, warnings=(*report.warnings, f"refresh not recorded: {exc}"))
        return report

    # -- index ---------------------------------------------------------------------------

    def _index_stage(self, full: bool, force: bool, hold_back: frozenset[str],
                     warnings: list[str], run: RefreshRun) -> StageReport:
        started = self._clock.monotonic()
        current = self._index.current()
        plan = self._plan(current, full, force, warnings)
        scan = self._source.scan()
        warnings.extend(scan.warnings)
        diff = diff_scan(plan.previous, scan.files)
        wanted = [p for p in (*diff.added, *diff.suspect) if p not in hold_back]
        docs, unreadable = read_notes(self._source, wanted, warnings)
        edits = NoteEdits.of(docs, unreadable, diff.removed, plan.previous)
        if current is not None and not plan.forced and edits.empty:
            return StageReport(stage=Stage.INDEX, outcome=StageOutcome.UNCHANGED, generation=current.id,
                               previous=current.id, reason="no note changed",
                               seconds=self._clock.monotonic() - started)
        stage = self._index.stage(plan.base)
        try:
            return self._fill(stage, plan, edits, scan, current, warnings, run, started)
        except BaseException:
            stage.discard()
            raise

    def _paths_stage(self, paths: Sequence[str], model_wait_s: float, warnings: list[str],
                     run: RefreshRun) -> StageReport:
        started = self._clock.monotonic()
        current = self._index.current()
        skipped = not_editable(current, self._index, self._source.chunking, self._embedder,
                               model_wait_s)
        if skipped is not None or current is None:  # not_editable names a missing index
            gen = current.id if current else None
            return StageReport(stage=Stage.INDEX, outcome=StageOutcome.SKIPPED, reason=skipped or "no index",
                               generation=gen, previous=gen)
        plan = plan_refresh(current=current, damage=[], model_id=current.model_id,
                            chunking=self._source.chunking, full=False, force=False)
        files = {p: f for p, f in ((p, self._source.stat(p)) for p in paths) if f is not None}
        docs, unreadable = read_notes(self._source, list(files), warnings)
        gone = [p for p in paths if p not in files and p in plan.previous]
        edits = NoteEdits.of(docs, unreadable, gone, plan.previous)
        if edits.empty or as_indexed(edits, files, plan.previous):
            return StageReport(stage=Stage.INDEX, outcome=StageOutcome.UNCHANGED, generation=current.id,
                               previous=current.id, reason="these notes are indexed as they are",
                               seconds=self._clock.monotonic() - started)
        stage = self._index.stage(plan.base)
        try:
            return self._fill(stage, plan, edits, SourceScan(files=files), current, warnings,
                              run, started)
        except BaseException:
            stage.discard()
            raise

    def _plan(self, current: GenerationInfo | None, full: bool, force: bool,
              warnings: list[str]) -> RefreshPlan:
        damage = self._index.check_current() if current is not None else []
        semantic = self._vectors.ready(warnings)
        plan = plan_refresh(current=current, damage=damage,
                            model_id=self._embedder.model_id if semantic else None,
                            chunking=self._source.chunking, full=full, force=force)
        warnings.extend(plan.warnings)
        return plan

    def _fill(self, stage: IndexStage, plan: RefreshPlan, edits: NoteEdits, scan: SourceScan,
              current: GenerationInfo | None, warnings: list[str], run: RefreshRun,
              started: float) -> StageReport:
        """Edit the stage, validate it, publish it or discard it (the caller discards on error)."""
        previous = current.id if current else None
        stage.remove([d.note.path for d in edits.docs] + list(edits.removed))
        claims = IdClaims(stage, self._source, self._vectors, self.policy.embed_call, warnings,
                          run.cancel)
        embedded, reused = self._add_all(claims, edits.docs, scan.files, plan.semantic, run)
        manifest = stage.manifest()
        validation = validate_index(stage, manifest, plan, self._embedder, list(
            claims.staged.values()), current, self.policy.max_index_shrink)
        if not validation.ok:
            stage.discard()
            return StageReport(stage=Stage.INDEX, outcome=StageOutcome.KEPT_LAST_GOOD, generation=previous,
                               previous=previous, validation=validation,
                               reason=failures_text(validation),
                               seconds=self._clock.monotonic() - started)
        run.cancel.raise_if_cancelled()
        info = stage.publish(plan.model_id, self._embedder.dimension if plan.semantic else None,
                             validation.as_dict(), self._source.chunking)
        return StageReport.index_published(current, manifest, generation=info.id, previous=previous,
                                           validation=validation, reason=plan.describe(),
                                           embedded=embedded, reused_vectors=reused,
                                           seconds=self._clock.monotonic() - started)

    def _add_all(self, claims: IdClaims, docs: Sequence[NoteDocument],
                 files: Mapping[str, SourceFile], semantic: bool,
                 run: RefreshRun) -> tuple[int, int]:
        """Add the notes in batches of about `embed_batch` chunks; (embedded, reused)."""
        embedded = reused = done = 0
        if docs:
            run.step(Stage.INDEX, 0, len(docs))
        for group in batches(docs, self.policy.embed_batch):
            vectors: Vectors | None = None
            if semantic:
                e, r, vectors = self._vectors.of(group, run.cancel, self.policy.embed_call)
                embedded, reused = embedded + e, reused + r
            for doc in group:
                claims.add(doc, files.get(doc.note.path), vectors)
            done += len(group)
            run.step(Stage.INDEX, done, len(docs))
        return embedded, reused

    def _graph_stage(self, force: bool, run: RefreshRun) -> StageReport:
        if self._graph is None:
            return StageReport(stage=Stage.GRAPH, outcome=StageOutcome.SKIPPED, reason="no graph builder")
        docs, _ = read_notes(self._source, sorted(self._source.scan().files), [])
        return self._graph.stage(docs, force, run)

    def _collect(self, warnings: list[str]) -> None:
        for store in (self._index, self._graphs):
            if store is None:
                continue
            try:
                store.collect(self.policy.keep_generations, self.policy.grace_seconds)
            except StoreError as exc:
                warnings.append(f"old generations not collected: {exc}")

