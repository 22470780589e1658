"""Embedder: turns text into normalized vectors. Explicitly numeric."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from memory.domain.model_state import EmbedderState


@runtime_checkable
class Embedder(Protocol):
    @property
    def model_id(self) -> str:
        """Stable id of the model; vectors of different ids never mix."""

    @property
    def dimension(self) -> int:
        """Length of every vector this embedder returns."""

    def embed_documents(self, texts: Sequence[str]) -> Sequence[Sequence[float]]:
        """One unit-length vector per text, in order; loads the model if needed."""

    def embed_query(self, text: str) -> Sequence[float]:
        """One unit-length vector for a search query."""

    def warm(self) -> None:
        """Start loading the model in the background; returns at once."""

    def wait_ready(self, timeout: float) -> bool:
        """Wait up to timeout seconds for the model; True when it can embed now."""

    def state(self) -> EmbedderState:
        """Where loading the model stands now."""

    def failure(self) -> str | None:
        """Why the model could not load (state() is FAILED), else None."""
