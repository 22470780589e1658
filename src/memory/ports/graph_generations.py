"""GraphGenerations: building, validating and publishing graph generations."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol, runtime_checkable

from attrs import frozen

from memory.domain.cancellation import CancelToken
from memory.domain.notes import NoteDocument
from memory.domain.refresh import GenerationInfo


@frozen(kw_only=True)
class GraphFacts:
    nodes: int
    edges: int
    page_notes: frozenset[str]  # memory_ids that have a page node
    dangling_edges: int


@runtime_checkable
class GraphStage(Protocol):
    @property
    def id(self) -> str:
        """Generation id this stage will publish as."""

    def facts(self) -> GraphFacts:
        """Counts and coverage of the staged graph."""

    def publish(self) -> GenerationInfo:
        """Make the staged graph current by atomic pointer replacement."""

    def discard(self) -> None:
        """Throw the stage away."""


@runtime_checkable
class GraphGenerations(Protocol):
    def current(self) -> GenerationInfo | None:
        """The published graph generation (GenerationInfo.notes = notes with a page node)."""

    def build(self, documents: Sequence[NoteDocument],
              cancel: CancelToken | None = None) -> GraphStage:
        """Build a graph of the whole root into a new stage (may take seconds).

        Cancelled (nothing left behind) when `cancel` is set during the build; StoreError
        when the build fails or its stage cannot be written.
        """

    def current_sources(self) -> Mapping[str, str] | None:
        """Path -> content hash of the notes the current graph was built from; None when
        there is no graph or it did not record them."""

    def collect(self, keep: int, grace_seconds: float) -> list[str]:
        """Delete old graph generations and stale stages."""

    def check_current(self) -> list[str]:
        """Problems with the current graph (missing, unreadable); empty when fine."""
