"""The graph stage of a full refresh: build, validate, publish, or keep the last good graph."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from memory.application.refresh.checks import failures_text, validate_graph
from memory.application.refresh.run import RefreshRun
from memory.domain.errors import Unavailable
from memory.domain.notes import NoteDocument
from memory.domain.refresh import GraphLag, Stage, StageOutcome, StageReport, ValidationReport
from memory.ports.clock import Clock
from memory.ports.errors import StoreError
from memory.ports.graph_generations import GraphGenerations


class GraphRefresh:
    """Every failure of a store (build, facts, publish) discards the stage and keeps the
    last good graph; a cancel or any other error discards it and goes up."""

    def __init__(self, graphs: GraphGenerations, clock: Clock, max_shrink: float):
        self._graphs = graphs
        self._clock = clock
        self._max_shrink = max_shrink

    def stage(self, docs: Sequence[NoteDocument], force: bool, run: RefreshRun) -> StageReport:
        started = self._clock.monotonic()
        run.step(Stage.GRAPH, 0, 1)
        current = self._graphs.current()
        previous = current.id if current else None

        def kept(reason: str, validation: ValidationReport | None = None) -> StageReport:
            return StageReport(stage=Stage.GRAPH, outcome=StageOutcome.KEPT_LAST_GOOD, generation=previous,
                               previous=previous, validation=validation, reason=reason,
                               seconds=self._clock.monotonic() - started)

        try:
            stage = self._graphs.build(docs, run.cancel)
        except (StoreError, Unavailable) as exc:
            return kept(f"graph build failed: {exc}")
        try:
            validation = validate_graph(stage.facts(), docs, current, force, self._max_shrink)
            if not validation.ok:
                stage.discard()
                return kept(failures_text(validation), validation)
            run.cancel.raise_if_cancelled()
            info = stage.publish()
        except (StoreError, Unavailable) as exc:
            stage.discard()
            return kept(f"graph not published: {exc}")
        except BaseException:
            stage.discard()
            raise
        run.step(Stage.GRAPH, 1, 1)
        return StageReport(stage=Stage.GRAPH, outcome=StageOutcome.PUBLISHED, generation=info.id,
                           previous=previous, validation=validation,
                           seconds=self._clock.monotonic() - started)

    def lag(self, index: Mapping[str, str]) -> GraphLag | None:
        """Notes (path -> content hash) the index holds differently from the current graph."""
        sources = self._graphs.current_sources()
        return None if sources is None else GraphLag.between(index, sources)
