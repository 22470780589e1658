"""Fakes of what capture needs from the index: a catalogue of the fake root's notes."""

from __future__ import annotations

import yaml

from memory.adapters.inmemory.note_writer import InMemoryNoteWriter
from memory.domain.capture_errors import DuplicateCandidate
from memory.domain.markdown import split_front_matter
from memory.domain.note_reading import read_note
from memory.domain.evidence import EvidenceItem, Signals
from memory.adapters.inmemory.note_writer import TEST_KEY
from memory.domain.note_text import NoteText
from memory.domain.notes import Note, Status
from memory.domain.placement import ScopeKey
from memory.ports.capture_index import IndexOutcome


def _listed(value) -> tuple[str, ...]:
    items = value if isinstance(value, list) else [] if value is None else [value]
    return tuple(str(i).strip("[]") for i in items)


def parsed(path: str, data: bytes) -> Note:
    """The note as the index would read it: the domain's one note factory, YAML by PyYAML."""
    text = NoteText.decode(data, path)
    block = split_front_matter("\n".join(text.lines))[0]
    fields = yaml.safe_load(block) if block else {}
    return read_note(path, text.lines, fields, content_hash=TEST_KEY.hash(data)).note


class FakeIndex:
    """NoteCatalogue, SimilarNotes, SingleNoteIndexer and NoteEvidence over a fake root."""

    def __init__(self, writer: InMemoryNoteWriter):
        self._writer = writer
        self.notes: dict[str, Note] = {}
        self.indexed: list[tuple[str, ...]] = []
        self.near: list[DuplicateCandidate] = []  # what similar() answers
        self.asked: list[tuple[str, ScopeKey]] = []
        self.failing = False

    def index_all(self) -> None:
        self.index_paths(tuple(self._writer.files))

    # NoteCatalogue
    def find(self, identity: str) -> Note | None:
        for note in self.notes.values():
            if identity in (note.memory_id, note.path) or identity.lower() == note.title.lower():
                return note
        return None

    def titled(self, title: str) -> list[Note]:
        return [n for n in self.notes.values() if n.title.lower() == title.lower()]

    # SimilarNotes
    def similar(self, *, title: str, body: str, scope: ScopeKey) -> list[DuplicateCandidate]:
        self.asked.append((title, scope))
        return list(self.near)

    # SingleNoteIndexer
    def index_paths(self, paths) -> IndexOutcome:
        self.indexed.append(tuple(paths))
        if self.failing:
            return IndexOutcome(indexed=False, warnings=("embedder not loaded",))
        for path in paths:
            self.notes = {k: n for k, n in self.notes.items() if n.path != path}
            if path in self._writer.files:
                note = parsed(path, self._writer.files[path])
                self.notes[note.memory_id] = note
        return IndexOutcome(indexed=True)

    # NoteEvidence
    def items(self, path: str) -> list[EvidenceItem]:
        note = next(n for n in self.notes.values() if n.path == path)
        return [EvidenceItem(memory_id=note.memory_id, path=path, title=note.title, heading="",
                             start_line=1, end_line=note.line_count, text="", score=1.0,
                             signals=Signals(), status=note.status.value)]
