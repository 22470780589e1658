"""One refresh under way: its progress and cancellation, and the edits its scan found."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from attrs import frozen

from memory.domain.cancellation import CancelToken
from memory.domain.errors import InvalidRequest, NotFound
from memory.domain.notes import NoteDocument
from memory.domain.refresh import BuildProgress, ManifestEntry, Stage
from memory.ports.note_source import NoteSource
from memory.ports.refresh_progress import RefreshProgressBoard

Progress = Callable[[Stage, int, int], None]


@frozen(kw_only=True)
class RefreshPolicy:
    keep_generations: int = 3
    grace_seconds: float = 60.0
    lock_timeout_s: float = 120.0
    max_graph_shrink: float = 0.5  # a graph losing more than half its notes needs force
    max_index_shrink: float = 0.5  # and an index (once at least 10 notes would go)
    embed_batch: int = 256  # chunks added (and progress reported) per step
    embed_call: int = 64  # chunks per embedding call: the longest a cancel waits


class RefreshRun:
    """Progress goes to the caller and to the board other processes read; every step is
    also where a cancelled refresh stops."""

    def __init__(self, progress: Progress | None, cancel: CancelToken | None,
                 board: RefreshProgressBoard | None):
        self._progress = progress or (lambda stage, done, total: None)
        self.cancel = cancel or CancelToken()
        self._board = board

    def step(self, stage: Stage, done: int, total: int) -> None:
        self.cancel.raise_if_cancelled()
        if self._board is not None:
            self._board.post(BuildProgress(stage=stage, done=done, total=total))
        self._progress(stage, done, total)

    def end(self) -> None:
        if self._board is not None:
            self._board.clear()


@frozen(kw_only=True)
class NoteEdits:
    """What the scan found against the plan's previous manifest, once the notes were read."""

    docs: tuple[NoteDocument, ...]  # to (re)add: new, changed, or only their stat moved
    removed: tuple[str, ...]

    @classmethod
    def of(cls, docs: Sequence[NoteDocument], unreadable: Sequence[str], removed: Sequence[str],
           previous: Mapping[str, ManifestEntry]) -> NoteEdits:
        """What to stage (the report counts what the published manifest changed)."""
        return cls(docs=tuple(docs),
                   removed=(*removed, *(p for p in unreadable if p in previous)))

    @property
    def empty(self) -> bool:
        return not (self.docs or self.removed)


def batches(docs: Sequence[NoteDocument], chunks: int) -> list[list[NoteDocument]]:
    """Consecutive groups of notes holding about `chunks` chunks each (at least one note)."""
    groups: list[list[NoteDocument]] = []
    size = chunks
    for doc in docs:
        if size >= chunks:
            groups.append([])
            size = 0
        groups[-1].append(doc)
        size += len(doc.chunks)
    return groups


def read_notes(source: NoteSource, paths: Sequence[str],
               warnings: list[str]) -> tuple[list[NoteDocument], list[str]]:
    """The notes at paths, and the paths that could not be read (each named in a warning)."""
    docs, unreadable = [], []
    for path in paths:
        try:
            doc = source.load(path)
        except (InvalidRequest, NotFound) as exc:
            warnings.append(f"skipped {path}: {exc}")
            unreadable.append(path)
            continue
        warnings.extend((*doc.warnings, *doc.notices))  # a refresh is where notices are said
        docs.append(doc)
    return docs, unreadable
