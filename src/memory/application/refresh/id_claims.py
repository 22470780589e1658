"""IdClaims: stage each note under the first memory_id it may keep, settling clashes."""

from __future__ import annotations

from collections.abc import Sequence

from attrs import evolve

from memory.application.refresh.chunk_vectors import ChunkVectors
from memory.domain.cancellation import CancelToken
from memory.domain.errors import InvalidRequest, NotFound
from memory.domain.identity import identity_claims, keeps_over
from memory.domain.notes import Chunk, NoteDocument
from memory.domain.refresh import ManifestEntry, SourceFile
from memory.ports.errors import DuplicateNote, StoreError
from memory.ports.index_generations import IndexStage
from memory.ports.note_source import NoteSource

Vectors = dict[str, Sequence[float]]  # vector by chunk hash


class IdClaims:
    """Adds notes to one stage; who keeps a contested id is settled by the two notes only."""

    def __init__(self, stage: IndexStage, source: NoteSource, vectors: ChunkVectors,
                 embed_call: int, warnings: list[str], cancel: CancelToken):
        self._stage = stage
        self._source = source
        self._vectors = vectors
        self._embed_call = embed_call
        self._warnings = warnings
        self._cancel = cancel
        self.staged: dict[str, NoteDocument] = {}  # each note as staged, under its final id

    def add(self, doc: NoteDocument, scanned: SourceFile | None, vectors: Vectors | None) -> None:
        """Stage a note under the first id it wants that it may keep (into staged too).

        Who keeps a contested id depends on the two notes only (identity.keeps_over), so
        the order notes arrive in, over one refresh or many, never changes an id: a note
        that keeps an id another holds takes it, and the other moves on to its next one.
        """
        # A file that vanished after the scan keeps size/mtime 0: the next scan re-reads it.
        entry = ManifestEntry(path=doc.note.path, content_hash=doc.note.content_hash,
                              size=scanned.size if scanned else 0,
                              mtime_ns=scanned.mtime_ns if scanned else 0)
        ordered = _ordered(doc, vectors)
        lost: list[tuple[str, str]] = []
        for memory_id in identity_claims(doc.note):
            attempt = _renamed(doc, memory_id)
            try:
                self._stage.add(attempt, entry, ordered)
            except DuplicateNote as clash:
                if not self._took_over(clash.holder, doc, memory_id, attempt, entry, ordered,
                                       vectors):
                    lost.append((memory_id, clash.holder or "another note"))
                    continue
            if lost:
                wanted, other = lost[0]
                self._warnings.append(f"{doc.note.path}: memory_id {wanted!r} is already used "
                                      f"by {other}, which keeps it; indexed as {memory_id!r}")
            self.staged[doc.note.path] = attempt
            return
        raise StoreError(f"{doc.note.path}: every memory_id it could take is taken")

    def _took_over(self, holder_path: str | None, doc: NoteDocument, memory_id: str,
                   attempt: NoteDocument, entry: ManifestEntry,
                   ordered: list[Sequence[float]] | None, vectors: Vectors | None) -> bool:
        """Whether doc keeps memory_id over its holder; if so the holder is staged anew."""
        holder = self._contender(holder_path)
        if holder is None or not keeps_over(doc.note, holder.note, memory_id):
            return False
        held = self._stage.manifest().get(holder.note.path)
        self._stage.remove([holder.note.path])
        self._stage.add(attempt, entry, ordered)
        self.add(holder, _scanned(held), self._vectors_of(holder, vectors))
        return True

    def _contender(self, path: str | None) -> NoteDocument | None:
        """The note holding a contested id, as its file reads now (None if it cannot be)."""
        if path is None:
            return None
        try:
            return self._source.load(path)
        except (InvalidRequest, NotFound):
            return None

    def _vectors_of(self, doc: NoteDocument, vectors: Vectors | None) -> Vectors | None:
        if vectors is None:
            return None
        return self._vectors.of([doc], self._cancel, self._embed_call)[2]


def _ordered(doc: NoteDocument, vectors: Vectors | None) -> list[Sequence[float]] | None:
    if vectors is None:
        return None
    return [vectors[c.hash] for c in doc.chunks]


def _scanned(entry: ManifestEntry | None) -> SourceFile | None:
    return SourceFile(path=entry.path, size=entry.size, mtime_ns=entry.mtime_ns) if entry else None


def _renamed(doc: NoteDocument, memory_id: str) -> NoteDocument:
    if memory_id == doc.note.memory_id:
        return doc
    chunks = tuple(Chunk.create(memory_id=memory_id, path=c.path, heading=c.heading,
                                start_line=c.start_line, end_line=c.end_line, text=c.text,
                                context=c.context, ordinal=c.ordinal) for c in doc.chunks)
    return evolve(doc, note=evolve(doc.note, memory_id=memory_id), chunks=chunks)
