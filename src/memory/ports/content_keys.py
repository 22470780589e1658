"""ContentKeys: where the secret a note's content_hash is keyed with is kept."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from memory.domain.note_text import ContentKey


@runtime_checkable
class ContentKeys(Protocol):
    def key(self) -> ContentKey:
        """This memory's content key, made on first use and the same from then on for every
        process that shares the index (StoreError when it can be neither read nor made)."""
