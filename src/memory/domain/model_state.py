"""EmbedderState: where the embedding model is in its life, as every reader checks it."""

from __future__ import annotations

from enum import Enum


class EmbedderState(Enum):
    """A model is loaded once: NOT_LOADED -> LOADING -> READY or FAILED (for good)."""

    NOT_LOADED = "not-loaded"
    LOADING = "loading"
    READY = "ready"
    FAILED = "failed"

    @property
    def settled(self) -> bool:
        """True when waiting longer cannot change it."""
        return self in (EmbedderState.READY, EmbedderState.FAILED)


def described(state: EmbedderState, failure: str | None) -> str:
    """The state as people read it: 'ready', or 'failed: <why>'."""
    return f"failed: {failure}" if state is EmbedderState.FAILED else state.value
