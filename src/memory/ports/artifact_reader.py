"""ArtifactReader: one provider format's files read as raw records, from a byte offset."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from memory.domain.artifacts import FileRead


@runtime_checkable
class ArtifactReader(Protocol):
    def files(self, paths: Sequence[str]) -> tuple[str, ...]:
        """The absolute paths of the files named, a folder standing for every file of the
        format under it (sorted); NotFound for a path that does not exist."""

    def prefix_digest(self, path: str, size: int) -> str | None:
        """sha256 of the file's first `size` bytes; None if it is now shorter than that."""

    def read(self, path: str, offset: int = 0, lines: int = 0) -> FileRead:
        """The records after byte `offset` (which ends line `lines`); BatchRefused naming
        the file and line of the first record that is not one (malformed JSON)."""
