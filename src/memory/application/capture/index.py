"""What capture asks of the index, answered by the real stack: the chunk store, the ranking
steps and the one-note refresh."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from attrs import evolve, frozen

from memory.application.refresh.indexer import Indexer
from memory.application.search.requests import SearchRequest
from memory.application.search.retrieval import RetrievalEngine
from memory.domain.candidates import Candidate
from memory.domain.capture_errors import DuplicateCandidate
from memory.domain.citing import NoteText, redacted
from memory.domain.errors import AiMemoryError
from memory.domain.evidence import EvidenceItem, Signals
from memory.domain.notes import Note
from memory.domain.placement import ScopeKey
from memory.domain.refresh import RefreshReport, Stage
from memory.domain.scope import StatusFilter
from memory.domain.text import QueryFeatures
from memory.ports.capture_index import (IndexOutcome, NoteCatalogue, NoteEvidence, SimilarNotes,
                                        SingleNoteIndexer)
from memory.ports.note_catalogue import NoteCatalogue as Catalogue
from memory.ports.index_generations import IndexGenerations


class IndexCatalogue(NoteCatalogue):
    """Notes as memory_get finds them: the current generation's memory_ids, paths, titles."""

    def __init__(self, chunks: Catalogue):
        self._chunks = chunks

    def find(self, identity: str) -> Note | None:
        found = self._chunks.find(identity)
        return found[0] if found else None

    def titled(self, title: str) -> Sequence[Note]:
        wanted = title.strip().casefold()
        return [n for n in self._chunks.find(title) if n.title.strip().casefold() == wanted]


@frozen(kw_only=True)
class Likeness:
    """How close one note of the scope is to the text a write brings, by the index's signals."""

    note: Note
    cosine: float | None  # the best cosine of the write's text with one of the note's chunks
    coverage: float  # the share of the write's content terms the note's text holds


@frozen(kw_only=True)
class DuplicatePolicy:
    """When a note likely holds the knowledge a write brings: it holds most of the write's
    words, and its closest chunk means much the same.

    Measured on the frozen fixtures (docs/benchmarks.md, "Near duplicates of a write"):
    restatements held 0.76 or more of their words, other notes of the same scope at most
    0.60; the cosine floor keeps a short write of common words from matching by words alone.
    """

    min_cosine: float = 0.60
    min_coverage: float = 0.68
    body_chars: int = 600  # the write's title plus this much of its body is the query
    depth: int = 30  # candidate chunks looked at
    most: int = 5  # candidates named in the refusal

    def why(self, likeness: Likeness) -> str | None:
        """The refusal's reason for this note, or None when it is not a near duplicate."""
        cosine = likeness.cosine
        if cosine is None or cosine < self.min_cosine or likeness.coverage < self.min_coverage:
            return None
        return (f"similar text (semantic {cosine:.2f}, "
                f"{likeness.coverage:.0%} of its words)")


class IndexSimilarNotes(SimilarNotes):
    """A search of the write's title and start of body within its scope, then the policy.

    The engine should search without a graph and without a default repository: only the
    write's own scope counts, and only notes of exactly that scope are kept.
    """

    def __init__(self, engine: RetrievalEngine, chunks: Catalogue, index: IndexGenerations,
                 policy: DuplicatePolicy | None = None):
        self._engine, self._chunks, self._index = engine, chunks, index
        self.policy = policy or DuplicatePolicy()

    def similar(self, *, title: str, body: str, scope: ScopeKey) -> Sequence[DuplicateCandidate]:
        found = []
        for likeness in self.likeness(title=title, body=body, scope=scope):
            reason = self.policy.why(likeness)
            if reason is not None:
                note = likeness.note
                found.append(DuplicateCandidate(memory_id=note.memory_id, path=note.path,
                                                title=note.title, reason=reason))
        return found[: self.policy.most]

    def likeness(self, *, title: str, body: str, scope: ScopeKey) -> list[Likeness]:
        """Every current note of exactly this scope the search found, closest first."""
        text = query_text(title, body, self.policy.body_chars)
        request = SearchRequest(query=text, limit=self.policy.depth,
                                filter=evolve(scope.search_filter(), status=StatusFilter.ACTIVE))
        with self._index.snapshot():
            ranked = self._engine.trace(request).ranked[: self.policy.depth]
            best = _best_by_note(ranked, scope)
            features = QueryFeatures.of(text)
            out = [Likeness(note=c.note, cosine=c.semantic_score,
                            coverage=features.coverage(
                                "\n".join(self._chunks.lines(c.note.memory_id))))
                   for c in best]
        return sorted(out, key=lambda x: (-(x.cosine or 0.0), -x.coverage))


def query_text(title: str, body: str, body_chars: int) -> str:
    """The write's title, then the start of its body (a heading repeating the title once)."""
    lines = [line for line in body.splitlines() if line.strip()]
    if lines and lines[0].lstrip("#").strip().casefold() == title.strip().casefold():
        lines = lines[1:]
    return f"{title}\n{' '.join(' '.join(lines).split())[:body_chars]}".strip()


def _best_by_note(ranked: Sequence[Candidate], scope: ScopeKey) -> list[Candidate]:
    """Per note of exactly the scope, still current: its chunk closest to the query."""
    best: dict[str, Candidate] = {}
    for c in ranked:
        if ScopeKey.of_note(c.note) != scope or not c.note.effective_status.is_current:
            continue
        held = best.get(c.note.memory_id)
        if held is None or (c.semantic_score or -1.0) > (held.semantic_score or -1.0):
            best[c.note.memory_id] = c
    return list(best.values())


class IndexedWrites(SingleNoteIndexer):
    """Indexes what a write touched through Indexer.refresh_paths; the write stands whatever
    the index does, so a failure becomes indexed: false with the reason."""

    def __init__(self, indexer: Indexer, *, model_wait_s: float = 30.0,
                 published: Callable[[RefreshReport], None] | None = None):
        """`published(report)` hears of each refresh (a server's graph follows new notes)."""
        self._indexer = indexer
        self._model_wait_s = model_wait_s
        self._published = published or (lambda report: None)

    def index_paths(self, paths: Sequence[str]) -> IndexOutcome:
        try:
            report = self._indexer.refresh_paths(paths, model_wait_s=self._model_wait_s)
        except AiMemoryError as exc:
            return IndexOutcome(indexed=False, warnings=(_not_indexed(str(exc)),))
        self._published(report)
        stage = report.stage(Stage.INDEX)
        if stage is not None and stage.outcome.serves_current:
            return IndexOutcome(indexed=True, warnings=report.warnings)
        reason = stage.reason if stage is not None else "no index stage ran"
        return IndexOutcome(indexed=False, warnings=(_not_indexed(reason), *report.warnings))


def _not_indexed(reason: str) -> str:
    return (f"written but not indexed yet ({reason}); the next refresh indexes it (a "
            "running server does before a later search)")


class IndexNoteEvidence(NoteEvidence):
    """A note's chunks in the current generation as evidence items, redacted, at most `most`."""

    def __init__(self, chunks: Catalogue, index: IndexGenerations, most: int = 20):
        self._chunks, self._index, self._most = chunks, index, most

    def items(self, path: str) -> Sequence[EvidenceItem]:
        with self._index.snapshot():
            note = next((n for n in self._chunks.find(path) if n.path == path), None)
            if note is None:
                return ()
            chunks = list(self._chunks.chunks_of(note.memory_id))
            lines = tuple(self._chunks.lines(note.memory_id))
        items = [EvidenceItem(memory_id=note.memory_id, path=note.path, title=note.title,
                              heading=c.heading, start_line=c.start_line, end_line=c.end_line,
                              text=c.text, score=1.0, signals=Signals(),
                              status=note.effective_status.value)
                 for c in chunks[: self._most]]
        text = NoteText(lines=lines, body_start=chunks[0].start_line if chunks else 1)
        return redacted(items, {note.memory_id: text})
