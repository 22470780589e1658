"""Errors adapters raise through ports; library errors are re-raised as these."""

from memory.domain.errors import AiMemoryError, Unavailable


class StoreError(AiMemoryError, RuntimeError):
    """A derived store (index, graph, cache, log) failed to read or write."""


class EmbedderUnavailable(Unavailable):
    """The embedding model is not loaded (still loading, or failed to load)."""


class DuplicateNote(StoreError):
    """A note's memory_id is already held by another path in the same generation."""


__all__ = ["DuplicateNote", "EmbedderUnavailable", "StoreError", "Unavailable"]
