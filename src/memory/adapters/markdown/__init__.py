"""Markdown adapter: the canonical memory root on the filesystem, read-only."""

from memory.adapters.markdown.note_source import MarkdownNoteSource

__all__ = ["MarkdownNoteSource"]
