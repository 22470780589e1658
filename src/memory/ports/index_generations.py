"""IndexGenerations: staging, validating and publishing index generations.

A generation is one committed state of the index, named by an id that packets and health
carry. Readers see whole generations only; a stage becomes visible all at once when it is
published, and a stage that is discarded (or whose process dies) never becomes visible.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol, runtime_checkable

from attrs import frozen

from memory.domain.notes import NoteDocument
from memory.domain.refresh import GenerationInfo, ManifestEntry
from memory.ports.errors import StoreError


@frozen(kw_only=True)
class StagedFacts:
    """What a staged generation holds, for the application's validation rules."""

    notes: int
    chunks: int
    vectors: int
    dimension: int | None
    integrity: str  # "ok" or the integrity check's complaint
    paths: frozenset[str]


@frozen
class ReadSnapshot:
    """The one generation an operation reads, pinned for as long as it holds the snapshot."""

    generation: GenerationInfo | None  # None: nothing is published yet

    @property
    def id(self) -> str | None:
        return self.generation.id if self.generation else None


def check_addable(document: NoteDocument, vectors: Sequence[Sequence[float]] | None) -> None:
    """What IndexStage.add refuses before it writes anything: chunks of another note, or a
    vector count other than the chunk count."""
    note = document.note
    strays = [c.chunk_id for c in document.chunks
              if c.memory_id != note.memory_id or c.path != note.path]
    if strays:
        raise StoreError(f"chunks {strays[:3]} do not belong to note {note.memory_id}")
    if vectors is not None and len(vectors) != len(document.chunks):
        raise StoreError(f"{len(vectors)} vectors given for {len(document.chunks)} chunks")


@runtime_checkable
class IndexStage(Protocol):
    @property
    def id(self) -> str:
        """Generation id this stage will publish as."""

    def manifest(self) -> Mapping[str, ManifestEntry]:
        """Source manifest carried over from the base generation, as edited so far."""

    def remove(self, paths: Iterable[str]) -> None:
        """Drop these notes (by relative path) and all their chunks and vectors."""

    def add(self, document: NoteDocument, entry: ManifestEntry,
            vectors: Sequence[Sequence[float]] | None) -> None:
        """Insert a note, its chunks and (if given) one vector per chunk, in order.

        Raises DuplicateNote when another path already holds the memory_id.
        """

    def facts(self) -> StagedFacts:
        """Counts, dimension and integrity of what is staged."""

    def probe(self, text: str, vector: Sequence[float] | None, limit: int) -> tuple[list[str], list[str]]:
        """Chunk ids found for text lexically and for vector semantically (self-check)."""

    def publish(self, model_id: str | None, dimension: int | None,
                validation: Mapping[str, Any], chunking: str | None = None) -> GenerationInfo:
        """Seal the stage and make it current, atomically for every reader."""

    def discard(self) -> None:
        """Throw the stage away; the current generation stays as it was."""


@runtime_checkable
class IndexGenerations(Protocol):
    def current(self) -> GenerationInfo | None:
        """The published generation readers use, switching if another process published."""

    def stage(self, base: str | None) -> IndexStage:
        """Start a new generation holding what base holds (empty when None), to be edited.

        base must be the current generation; an adapter may edit it in place inside one
        transaction, so at most one stage is open at a time (the refresh lock)."""

    def collect(self, keep: int, grace_seconds: float) -> list[str]:
        """Delete what no reader needs any more (superseded states beyond `keep`, stale
        stages) once grace_seconds old; return what was removed."""

    def check_current(self) -> list[str]:
        """Problems with what serves (missing, damaged, an older copy serving instead);
        empty when fine. Cheap: a refresh calls it every time."""

    def snapshot(self) -> AbstractContextManager[ReadSnapshot]:
        """Pin the current generation for one operation: within the block, every read this
        thread makes through the stores (and current()) sees the generation the snapshot
        names, however many are published meanwhile. Damage found while reading may switch
        to what serves instead: the caller checks current() once, after."""
