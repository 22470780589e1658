"""In-memory index generations, a small BM25 chunk store and brute-force vectors."""

from __future__ import annotations

import math
import threading
import time
import unicodedata
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager

import Stemmer
from attrs import define, field

from memory.domain.candidates import Hit
from memory.domain.note_keys import NoteKeys, exact_first, name_key
from memory.domain.notes import Chunk, Note, NoteDocument
from memory.domain.refresh import GenerationInfo, ManifestEntry
from memory.domain.scope import ScopeFilter
from memory.domain.text import STOPWORDS, words
from memory.ports.errors import DuplicateNote, StoreError
from memory.ports.index_generations import (IndexGenerations, IndexStage, ReadSnapshot,
                                            StagedFacts, check_addable)
from memory.ports.lexical_index import LexicalIndex
from memory.ports.note_catalogue import NoteCatalogue
from memory.ports.vector_index import VectorIndex


# The same Porter stemmer and diacritic folding as the SQLite index's FTS5 tokenizer
# ('porter unicode61 remove_diacritics 2'), so the fake matches the words the product does.
_PORTER = Stemmer.Stemmer("porter")


def _fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text or "")
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def tokens(text: str) -> list[str]:
    """Every word of an indexed text, folded and stemmed (stopwords count, as in FTS5)."""
    return _PORTER.stemWords(words(_fold(text)))


def terms(text: str) -> list[str]:
    """Query terms: stopwords dropped unless the query has nothing else (as the product)."""
    found = words(_fold(text))
    kept = [w for w in found if w not in STOPWORDS] or found
    return _PORTER.stemWords(kept)


@define
class Snapshot:
    """One generation's content."""

    id: str
    created: str
    notes: dict[str, Note] = field(factory=dict)
    documents: dict[str, NoteDocument] = field(factory=dict)
    vectors: dict[str, Sequence[float]] = field(factory=dict)
    manifest: dict[str, ManifestEntry] = field(factory=dict)
    model_id: str | None = None
    dimension: int | None = None
    chunking: str | None = None
    corrupt: bool = False
    published_at: float | None = None  # monotonic seconds, for collect's grace period

    def copy(self, new_id: str, created: str) -> Snapshot:
        return Snapshot(id=new_id, created=created, notes=dict(self.notes),
                        documents=dict(self.documents), vectors=dict(self.vectors),
                        manifest=dict(self.manifest), model_id=self.model_id,
                        dimension=self.dimension, chunking=self.chunking)

    def info(self) -> GenerationInfo:
        chunks = sum(len(d.chunks) for d in self.documents.values())
        return GenerationInfo(id=self.id, created=self.created, notes=len(self.notes),
                              chunks=chunks, vectors=len(self.vectors), model_id=self.model_id,
                              dimension=self.dimension, schema_version=1,
                              chunking=self.chunking,
                              manifest=dict(self.manifest))


class InMemoryIndex:
    """Holds every generation and the current pointer; shared by the read adapters."""

    def __init__(self):
        self.generations: dict[str, Snapshot] = {}
        self.current_id: str | None = None
        self._counter = 0
        self._bm25: tuple[str, _Bm25] | None = None
        self._pins = threading.local()

    def next_id(self) -> str:
        self._counter += 1
        return f"mem-{self._counter:06d}"

    @property
    def current(self) -> Snapshot | None:
        """What this thread reads: the generation it pinned, else the published one."""
        pinned = getattr(self._pins, "stack", None)
        if pinned:
            return pinned[-1]
        return self.generations.get(self.current_id) if self.current_id else None

    @contextmanager
    def pinned(self) -> Iterator[None]:
        """Within it, this thread keeps reading the generation current at its start."""
        stack = getattr(self._pins, "stack", None)
        if stack is None:
            stack = self._pins.stack = []
        stack.append(self.current)
        try:
            yield
        finally:
            stack.pop()

    def bm25(self) -> _Bm25 | None:
        snap = self.current
        if snap is None:
            return None
        if self._bm25 is None or self._bm25[0] != snap.id:
            self._bm25 = (snap.id, _Bm25(snap))
        return self._bm25[1]


class _Bm25:
    k1, b = 1.2, 0.75

    def __init__(self, snap: Snapshot):
        self.chunks: list[tuple[Chunk, Counter]] = [
            (c, Counter(tokens(c.indexed_text))) for d in snap.documents.values() for c in d.chunks]
        self.df: Counter = Counter()
        for _, tf in self.chunks:
            self.df.update(tf.keys())
        self.avg = sum(sum(tf.values()) for _, tf in self.chunks) / max(1, len(self.chunks))

    def score(self, query: list[str], tf: Counter) -> float:
        n, length = len(self.chunks), sum(tf.values())
        total = 0.0
        for term in set(query):
            if term not in tf:
                continue
            idf = math.log(1 + (n - self.df[term] + 0.5) / (self.df[term] + 0.5))
            f = tf[term]
            total += idf * f * (self.k1 + 1) / (f + self.k1 * (1 - self.b + self.b * length / self.avg))
        return total


class InMemoryStage(IndexStage):
    def __init__(self, index: InMemoryIndex, snap: Snapshot):
        self._index = index
        self._snap = snap
        self.published = False
        self.discarded = False

    @property
    def id(self) -> str:
        return self._snap.id

    def _open(self) -> Snapshot:
        if self.published or self.discarded:
            raise StoreError(f"stage {self._snap.id} was already published or discarded")
        return self._snap

    def manifest(self) -> Mapping[str, ManifestEntry]:
        return dict(self._open().manifest)

    def remove(self, paths: Iterable[str]) -> None:
        self._open()
        for path in paths:
            self._snap.manifest.pop(path, None)
            for mid, note in list(self._snap.notes.items()):
                if note.path == path:
                    for c in self._snap.documents[mid].chunks:
                        self._snap.vectors.pop(c.chunk_id, None)
                    del self._snap.notes[mid], self._snap.documents[mid]

    def add(self, document: NoteDocument, entry: ManifestEntry, vectors) -> None:
        self._open()
        check_addable(document, vectors)
        note = document.note
        existing = self._snap.notes.get(document.note.memory_id)
        if existing is not None and existing.path != document.note.path:
            raise DuplicateNote(f"{document.note.memory_id} already used by {existing.path}",
                                holder=existing.path)
        self.remove([note.path])  # adding a path again replaces what it held
        self._snap.notes[document.note.memory_id] = document.note
        self._snap.documents[document.note.memory_id] = document
        self._snap.manifest[entry.path] = entry
        if vectors is not None:
            for chunk, vector in zip(document.chunks, vectors):
                self._snap.vectors[chunk.chunk_id] = list(vector)
                self._snap.dimension = len(vector)

    def facts(self) -> StagedFacts:
        self._open()
        chunks = sum(len(d.chunks) for d in self._snap.documents.values())
        return StagedFacts(notes=len(self._snap.notes), chunks=chunks,
                           vectors=len(self._snap.vectors), dimension=self._snap.dimension,
                           integrity="corrupt" if self._snap.corrupt else "ok",
                           paths=frozenset(n.path for n in self._snap.notes.values()))

    def probe(self, text: str, vector, limit: int) -> tuple[list[str], list[str]]:
        bm = _Bm25(self._open())
        query = terms(text)
        lexical = sorted(((bm.score(query, tf), c.chunk_id) for c, tf in bm.chunks if bm.score(query, tf) > 0),
                         reverse=True)[:limit]
        nearest = []
        if vector is not None:
            nearest = sorted(((_dot(vector, v), cid) for cid, v in self._snap.vectors.items()),
                             reverse=True)[:limit]
        return [c for _, c in lexical], [c for _, c in nearest]

    def publish(self, model_id, dimension, validation, chunking=None) -> GenerationInfo:
        self._open()
        self._snap.model_id = model_id
        self._snap.chunking = chunking
        self._snap.dimension = dimension
        self._snap.published_at = time.monotonic()
        self._index.generations[self._snap.id] = self._snap
        self._index.current_id = self._snap.id
        self.published = True
        return self._snap.info()

    def discard(self) -> None:
        self.discarded = True


class InMemoryGenerations(IndexGenerations):
    def __init__(self, index: InMemoryIndex, clock_iso: str = "2026-01-15T12:00:00Z"):
        self._index = index
        self._created = clock_iso
        self.stages: list[InMemoryStage] = []

    def current(self) -> GenerationInfo | None:
        snap = self._index.current
        return snap.info() if snap else None

    def stage(self, base: str | None) -> InMemoryStage:
        if base is not None and base not in self._index.generations:
            raise StoreError(f"base index generation {base} does not exist")
        new_id = self._index.next_id()
        snap = (self._index.generations[base].copy(new_id, self._created) if base
                else Snapshot(id=new_id, created=self._created))
        stage = InMemoryStage(self._index, snap)
        self.stages.append(stage)
        return stage

    def collect(self, keep: int, grace_seconds: float) -> list[str]:
        """Like the product: an old generation goes once its successor is grace_seconds old."""
        newest_first = sorted(self._index.generations, reverse=True)
        now = time.monotonic()
        old = []
        for i, gen_id in enumerate(newest_first):
            successor = self._index.generations[newest_first[i - 1]] if i else None
            superseded = successor.published_at if successor else None
            if (i < max(0, keep) or gen_id == self._index.current_id
                    or superseded is None or now - superseded < max(0.0, grace_seconds)):
                continue
            old.append(gen_id)
        for gen_id in old:
            del self._index.generations[gen_id]
        return old

    @contextmanager
    def snapshot(self) -> Iterator[ReadSnapshot]:
        with self._index.pinned():
            yield ReadSnapshot(self.current())

    def check_current(self) -> list[str]:
        return []


def _dot(a, b) -> float:
    return sum(x * y for x, y in zip(a, b))


class InMemoryChunkStore(LexicalIndex, NoteCatalogue):
    """Both roles over the snapshot this thread reads (bm25 over Python dicts)."""

    def __init__(self, index: InMemoryIndex):
        self._index = index

    def _snap(self) -> Snapshot | None:
        return self._index.current

    def search(self, query: str, scope: ScopeFilter, limit: int) -> list[Hit]:
        bm, snap = self._index.bm25(), self._snap()
        if bm is None:
            return []
        q = terms(query)
        scored = []
        admitted: dict[str, bool] = {}  # judged once per note, not once per chunk
        for chunk, tf in bm.chunks:
            note = snap.notes[chunk.memory_id]
            if chunk.memory_id not in admitted:
                admitted[chunk.memory_id] = scope.admits(note)
            if not admitted[chunk.memory_id]:  # scope before ranking
                continue
            s = bm.score(q, tf)
            if s > 0:
                scored.append(Hit(chunk, note, s))
        scored.sort(key=lambda h: (-h.score, h.chunk.chunk_id))
        return scored[:limit]

    def notes(self, scope: ScopeFilter | None = None) -> list[Note]:
        snap = self._snap()
        if snap is None:
            return []
        notes = sorted(snap.notes.values(), key=lambda n: n.path)
        return [n for n in notes if scope is None or scope.admits(n)]

    def note(self, memory_id: str) -> Note | None:
        snap = self._snap()
        return snap.notes.get(memory_id) if snap else None

    def find(self, name: str) -> list[Note]:
        key = name_key(name)
        return exact_first((n for n in self.notes() if key and key in NoteKeys.of(n).names), name)

    def chunks_of(self, memory_id: str) -> Sequence[Chunk]:
        snap = self._snap()
        doc = snap.documents.get(memory_id) if snap else None
        return doc.chunks if doc else ()

    def lines(self, memory_id: str) -> Sequence[str]:
        snap = self._snap()
        doc = snap.documents.get(memory_id) if snap else None
        return doc.lines if doc else ()


class InMemoryVectorIndex(VectorIndex):
    def __init__(self, index: InMemoryIndex):
        self._index = index

    def search(self, vector, scope: ScopeFilter, limit: int) -> list[Hit]:
        snap = self._index.current
        if snap is None:
            return []
        hits = []
        for doc in snap.documents.values():
            if not scope.admits(doc.note):
                continue
            for chunk in doc.chunks:
                v = snap.vectors.get(chunk.chunk_id)
                if v is not None:
                    hits.append(Hit(chunk, doc.note, _dot(vector, v)))
        hits.sort(key=lambda h: (-h.score, h.chunk.chunk_id))
        return hits[:limit]
