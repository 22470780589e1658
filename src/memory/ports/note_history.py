"""NoteHistory: records each write of a note in version control, when writes are set to."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from memory.domain.new_note import Author
from memory.ports.errors import StoreError


class HistoryError(StoreError):
    """A change could not be recorded (the note itself is written)."""


@runtime_checkable
class NoteHistory(Protocol):
    def record(self, paths: Sequence[str], message: str, author: Author) -> str:
        """Commit exactly these paths (new, changed or moved away) as one change authored by
        author; return the commit id. Never pushes. HistoryError if it cannot."""
