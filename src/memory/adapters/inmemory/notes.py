"""InMemoryNoteSource: a memory root held as a dict of parsed documents."""

from __future__ import annotations

from memory.domain.errors import InvalidRequest, NotFound
from memory.domain.notes import NoteDocument, note_path
from memory.domain.refresh import SourceFile, SourceScan
from memory.ports.note_source import NoteSource


class InMemoryNoteSource(NoteSource):
    def __init__(self, documents=(), root: str = "/memory"):
        self._root = root
        self._chunking = "in-memory-v1"
        self._docs: dict[str, NoteDocument] = {}
        self._versions: dict[str, int] = {}
        self._clock = 0
        self.unreadable: dict[str, str] = {}  # path -> reason, to simulate bad files
        for doc in documents:
            self.put(doc)

    @property
    def root(self) -> str:
        return self._root

    @property
    def chunking(self) -> str:
        return self._chunking

    @chunking.setter
    def chunking(self, value: str) -> None:
        """Tests set another value to mean "these notes are now chunked another way"."""
        self._chunking = value

    def put(self, doc: NoteDocument) -> None:
        self._clock += 1
        self._docs[doc.note.path] = doc
        self._versions[doc.note.path] = self._clock

    def delete(self, path: str) -> None:
        self._docs.pop(path, None)
        self._versions.pop(path, None)

    def scan(self) -> SourceScan:
        files = {p: SourceFile(path=p, size=sum(len(x) + 1 for x in d.lines),
                               mtime_ns=self._versions[p]) for p, d in self._docs.items()}
        files.update({p: SourceFile(path=p, size=1, mtime_ns=0) for p in self.unreadable})
        return SourceScan(files=files)

    def stat(self, path: str) -> SourceFile | None:
        return self.scan().files.get(note_path(path))

    def load(self, path: str) -> NoteDocument:
        path = note_path(path)
        if path in self.unreadable:
            raise InvalidRequest(f"{path}: {self.unreadable[path]}")
        try:
            return self._docs[path]
        except KeyError:
            raise NotFound(f"no note at {path!r}") from None
