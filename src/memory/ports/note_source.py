"""NoteSource: the canonical Markdown memory root, read-only."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from memory.domain.notes import NoteDocument
from memory.domain.refresh import SourceFile, SourceScan


@runtime_checkable
class NoteSource(Protocol):
    @property
    def root(self) -> str:
        """Absolute path of the memory root."""

    @property
    def chunking(self) -> str:
        """How notes become chunks (rules version and window); an index generation built
        another way is rebuilt from the notes rather than edited."""

    def scan(self) -> SourceScan:
        """List every indexable Markdown file by relative path (stat only, no reading).

        Raises NotFound when the root itself is missing or unreadable.
        """

    def stat(self, path: str) -> SourceFile | None:
        """One file as scan() would list it (same path, size and mtime), or None when
        scan() would not list it (missing, hidden, too big, not a note); no root scan.

        InvalidRequest for a path that is no note path (outside the root, absolute).
        """

    def load(self, path: str) -> NoteDocument:
        """Read and parse one note.

        NotFound if missing; InvalidRequest if outside the root, binary, not UTF-8,
        oversized or unreadable (the indexer turns those into warnings).
        """
