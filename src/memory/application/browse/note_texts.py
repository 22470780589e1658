"""NoteTexts: a note's lines as its file holds them now, or as the index holds them where the
root has no such file (a server on a shared store with no checkout of the notes)."""

from __future__ import annotations

from memory.domain.errors import NotFound
from memory.domain.notes import Note, NoteDocument
from memory.ports.note_catalogue import NoteCatalogue
from memory.ports.note_source import NoteSource

INDEXED_COPY = ("{path} is not in this server's memory root: these are its lines as the "
                "index holds them (secret values already replaced; the front matter is in "
                "the lines only)")


class NoteTexts:
    """The file first: a read returns what memory_edit will compare its content_hash with,
    and a file edited since the last refresh reads as it is now."""

    def __init__(self, *, source: NoteSource, catalogue: NoteCatalogue):
        self._source = source
        self._catalogue = catalogue

    def load(self, path: str, indexed: Note | None) -> NoteDocument:
        """The note at `path`; `indexed` is the index's note there (None: not indexed), whose
        lines answer when the root lacks the file. NotFound when neither has it."""
        try:
            return self._source.load(path)
        except NotFound:
            if indexed is None:
                raise
        return NoteDocument(note=indexed, chunks=(),
                            lines=tuple(self._catalogue.lines(indexed.memory_id)),
                            warnings=(INDEXED_COPY.format(path=indexed.path),))
