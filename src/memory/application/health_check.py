"""memory_health's answer: generations, changes since the index, model state, self-check."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from typing import Any

from memory.domain.health import (SHARED_FULL_REFRESH, SHARED_INDEX, ChangedFiles,
                                  EmbedderHealth, GraphHealth, Health, IndexHealth, SecretNote,
                                  SelfCheck, WriteAccess)
from memory.domain.messages import Action, Message
from memory.domain.model_state import EmbedderState
from memory.domain.refresh import GenerationInfo, GraphLag, diff_scan
from memory.domain.scope import ScopeFilter, StatusFilter
from memory.domain.secrets import redact_lines, redact_text
from memory.ports.clock import Clock
from memory.ports.embedder import Embedder
from memory.ports.graph_generations import GraphGenerations
from memory.ports.graph_provider import GraphProvider
from memory.ports.index_generations import IndexGenerations
from memory.ports.journal import FeedbackLog, RefreshHistory
from memory.ports.lexical_index import LexicalIndex
from memory.ports.note_catalogue import NoteCatalogue
from memory.ports.note_source import NoteSource
from memory.ports.refresh_progress import RefreshProgressBoard

STALE_INDEX = Message("the index is older than the newest Markdown change: run ", Action.REFRESH,
                      " (the next search also indexes small edits before it answers)")
REBUILD_MOVED = Message("run ", Action.REFRESH_FULL, " (a running `ai-memory serve` rebuilds it "
                        "by itself once edits pause)")
REBUILD_BEHIND = Message(Action.REFRESH, " runs with mode 'full' (a running `ai-memory serve` "
                         "rebuilds it by itself when notes come or go)")


def graph_moved(lag: GraphLag, rebuild: str) -> Message:
    """Notes gone from where the graph has them: its answers name files that are not there."""
    return Message(f"{lag.describe()}: the graph still has notes that moved or were removed, so ",
                   Action.NEIGHBORS, " and ", Action.PATH,
                   " can answer with paths that no longer exist; ", rebuild)


def graph_behind(lag: GraphLag, rebuild: str) -> Message:
    """Notes only added or edited: what the graph answers is still there, only incomplete."""
    return Message(f"{lag.describe()}: ", Action.NEIGHBORS, " and ", Action.PATH,
                   " miss the newest notes and links until ", rebuild)


class HealthCheck:
    """Reads every store's state for memory_health; judges nothing it cannot see.

    `shared_index`: the index is another process's (a reader of a shared store), so this
    server's root, which it never indexes, is not compared with it, and the refresh history
    is the store's publication time, not this host's journal (the indexer writes that).
    """

    def __init__(self, *, source: NoteSource, lexical: LexicalIndex,
                 catalogue: NoteCatalogue, index: IndexGenerations,
                 graph: GraphProvider | None, graphs: GraphGenerations | None,
                 embedder: Embedder, feedback: FeedbackLog, history: RefreshHistory,
                 clock: Clock, graph_lag: Callable[[], GraphLag | None] = lambda: None,
                 board: RefreshProgressBoard | None = None,
                 writes: WriteAccess = WriteAccess(enabled=False), shared_index: bool = False):
        self._source, self._index, self._shared = source, index, shared_index
        self._lexical, self._catalogue = lexical, catalogue
        self._graph, self._graphs, self._embedder = graph, graphs, embedder
        self._feedback, self._history, self._clock = feedback, history, clock
        self._graph_lag, self._board, self._writes = graph_lag, board, writes

    def health(self, warnings: list[str], writes_refused: str | None = None) -> Health:
        """`writes_refused`: why this caller may not write, though the server may."""
        index = self._index_health()
        if index.older_than_sources:
            warnings.append(STALE_INDEX)
        graph, lag = self._graph_health()
        if lag is not None and not lag.removed:
            warnings.append(graph_behind(lag, (
                f"the shared graph is rebuilt: {SHARED_FULL_REFRESH}" if self._shared
                else REBUILD_BEHIND)))
        state = self._embedder.state()
        self_check = self._self_check()
        return Health(
            healthy=index.generation is not None and not index.problems and self_check.ok
            and not (lag and lag.removed),
            root=self._source.root, index=index, graph=graph,
            embedder=EmbedderHealth(model_id=self._embedder.model_id,
                                    dimension=self._embedder.dimension, state=state,
                                    failure=self._embedder.failure(),
                                    semantic_search=state is EmbedderState.READY),
            last_refresh=self._last_refresh(index.generation),
            feedback_records=self._feedback.count(), self_check=self_check,
            writes=self._writes.refused(writes_refused) if writes_refused else self._writes,
            notes_past_review=self._past_review(), notes_with_secrets=self._secrets(),
            warnings=tuple(warnings))

    def _index_health(self) -> IndexHealth:
        current = self._index.current()
        problems = list(self._index.check_current())
        building = self._board.read() if self._board is not None and current is None else None
        if building is not None:
            problems.append(f"no index generation yet: {building.describe()}")
        elif current is None:
            problems.append(Message("not indexed: no index generation: ", (
                SHARED_INDEX if self._shared else Message("run ", Action.REFRESH, " to build it"))))
        if self._shared:
            return IndexHealth(generation=current, problems=tuple(problems),
                               files_changed_since=None, refreshed_by=SHARED_INDEX)
        scan = self._source.scan()
        diff = diff_scan(current.manifest if current else {}, scan.files)
        newest = max((f.mtime_ns for f in scan.files.values()), default=None)
        return IndexHealth(
            generation=current, problems=tuple(problems),
            files_changed_since=ChangedFiles(
                added=len(diff.added), removed=len(diff.removed), modified=len(diff.suspect),
                examples=(*diff.added, *diff.suspect, *diff.removed)[:5]),
            newest_source_change=_iso(newest),
            older_than_sources=current is not None and _older_than(current.created, newest))

    def _graph_health(self) -> tuple[GraphHealth, GraphLag | None]:
        """The graph's state, and how far it is behind the index (None: not behind)."""
        problems = list(self._graphs.check_current()) if self._graphs else []
        if self._graph is not None:
            # The provider and the generations often say one thing, one of them with detail.
            problems += [p for p in self._graph.problems() if not _said(p, problems)]
        current = self._graph.current() if self._graph else None
        lag = self._graph_lag() if current is not None else None
        lag = lag if lag is not None and lag.behind else None
        if lag is not None and lag.removed:  # moved notes are removed at their old path
            problems.append(graph_moved(lag, (
                SHARED_FULL_REFRESH if self._shared else REBUILD_MOVED)))
        return GraphHealth(generation=current, problems=tuple(problems),
                           behind_index=lag.behind if lag else 0), lag

    def _last_refresh(self, current: GenerationInfo | None) -> dict[str, Any] | None:
        if not self._shared:
            return _plain(self._history.last())
        if current is None:
            return None
        return {"time": current.created, "index_generation": current.id,
                "source": "the store: when its current generation was published"}

    def _self_check(self) -> SelfCheck:
        notes = self._catalogue.notes()
        if not notes:
            return SelfCheck(ok=False, detail="the index holds no notes")
        note = notes[len(notes) // 2]
        chunk = next((c for c in self._catalogue.chunks_of(note.memory_id) if c.text.strip()), None)
        if chunk is None:
            return SelfCheck(ok=True, detail=f"{note.path} has no text to probe")
        probe = " ".join(chunk.text.split()[:12])
        hits = self._lexical.search(probe, ScopeFilter(status=StatusFilter.ANY), 20)
        ok = any(h.note.memory_id == note.memory_id for h in hits)
        return SelfCheck(ok=ok, probe=redact_text(probe[:80]), expected=note.path,
                         detail="found" if ok else "the probe did not find its own note")

    def _past_review(self) -> tuple[str, ...]:
        today = self._clock.now_iso()[:10]
        return tuple(n.path for n in self._catalogue.notes()
                     if n.review_after and n.review_after[:10] < today)[:50]

    def _secrets(self) -> tuple[SecretNote, ...]:
        """Notes holding secret-shaped text, so a person can clean them (values not shown)."""
        found = []
        for note in self._catalogue.notes(ScopeFilter(status=StatusFilter.ANY)):
            _, findings = redact_lines(self._catalogue.lines(note.memory_id))
            if findings:
                found.append(SecretNote(path=note.path,
                                        lines=tuple(sorted({f.line for f in findings}))[:20],
                                        kinds=tuple(sorted({f.kind for f in findings}))))
        return tuple(found)


def _plain(record: Mapping[str, Any] | None) -> dict[str, Any] | None:
    return dict(record) if record is not None else None


def _iso(mtime_ns: int | None) -> str | None:
    if not mtime_ns:
        return None
    return datetime.fromtimestamp(mtime_ns / 1e9, timezone.utc).isoformat(timespec="seconds")


def _older_than(created: str, newest_mtime_ns: int | None) -> bool:
    """True when a source file changed at least a second after the generation was created."""
    if not newest_mtime_ns or not created:
        return False
    try:
        made = datetime.fromisoformat(created.replace("Z", "+00:00"))
    except ValueError:
        return False
    if made.tzinfo is None:
        made = made.replace(tzinfo=timezone.utc)
    return newest_mtime_ns / 1e9 >= made.timestamp() + 1.0  # created is kept to the second


def _said(problem: str, problems: list[str]) -> bool:
    """True when `problem`, or the same words with more detail, is already listed."""
    return any(p == problem or p.startswith(problem) or problem.startswith(p) for p in problems)
