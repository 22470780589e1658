"""Errors adapters raise through ports; library errors are re-raised as these."""

from memory.domain.errors import AiMemoryError, Unavailable


class StoreError(AiMemoryError, RuntimeError):
    """A derived store (index, graph, cache, log) failed to read or write."""


class StoreUnsupported(StoreError):
    """The store's server lacks what ai-memory needs (pgvector too old, or none); no refresh
    fixes it: the server's owner must upgrade."""


class EmbedderUnavailable(Unavailable):
    """The embedding model is not loaded (still loading, or failed to load)."""


class DuplicateNote(StoreError):
    """A note's memory_id is already held by another path in the same generation."""

    def __init__(self, message: str, holder: str | None = None):
        super().__init__(message)
        self.holder = holder  # the path holding the memory_id


__all__ = ["DuplicateNote", "EmbedderUnavailable", "StoreError", "StoreUnsupported",
           "Unavailable"]
