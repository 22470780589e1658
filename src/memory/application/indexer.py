"""Indexer: the refresh pipeline. Stage, validate, publish, or keep the last good state."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from attrs import evolve, frozen

from memory.domain.errors import InvalidRequest, NotFound
from memory.domain.identity import identity_claims, keeps_over
from memory.domain.notes import Chunk, NoteDocument
from memory.domain.text import content_terms
from memory.domain.refresh import (Check, GenerationInfo, ManifestEntry, RefreshReport,
                                   SourceFile, StageReport, ValidationReport, diff_scan)
from memory.ports.clock import Clock
from memory.ports.embedder import Embedder
from memory.ports.embedding_cache import EmbeddingCache
from memory.ports.errors import DuplicateNote, StoreError, Unavailable
from memory.ports.graph_generations import GraphGenerations
from memory.ports.index_generations import IndexGenerations, IndexStage
from memory.ports.journal import RefreshHistory
from memory.ports.lock import RefreshLock
from memory.ports.note_source import NoteSource

Progress = Callable[[str, int, int], None]


@frozen(kw_only=True)
class RefreshPolicy:
    keep_generations: int = 3
    grace_seconds: float = 60.0
    lock_timeout_s: float = 120.0
    max_graph_shrink: float = 0.5  # a graph losing more than half its notes needs force
    embed_batch: int = 256


class Indexer:
    """Turns the Markdown root into published index and graph generations."""

    def __init__(self, source: NoteSource, index: IndexGenerations, embedder: Embedder,
                 cache: EmbeddingCache, lock: RefreshLock, clock: Clock,
                 history: RefreshHistory, graphs: GraphGenerations | None = None,
                 policy: RefreshPolicy | None = None):
        self._source = source
        self._index = index
        self._embedder = embedder
        self._cache = cache
        self._lock = lock
        self._clock = clock
        self._history = history
        self._graphs = graphs
        self.policy = policy or RefreshPolicy()

    def refresh(self, mode: str = "index", force: bool = False,
                progress: Progress | None = None) -> RefreshReport:
        if mode not in ("index", "full"):
            raise InvalidRequest(f"refresh mode must be 'index' or 'full', not {mode!r}")
        progress = progress or (lambda stage, done, total: None)
        with self._lock.hold(self.policy.lock_timeout_s):
            warnings: list[str] = []
            stages: list[StageReport] = []
            if mode == "full":
                stages.append(self._graph_stage(force, warnings, progress))
            stages.append(self._index_stage(mode == "full", force, warnings, progress))
            self._collect(warnings)
        report = RefreshReport(mode=mode, stages=tuple(stages), warnings=tuple(warnings))
        self._history.append({"time": self._clock.now_iso(), **report.as_dict()})
        return report

    # -- index ---------------------------------------------------------------------------

    def _index_stage(self, full: bool, force: bool, warnings: list[str],
                     progress: Progress) -> StageReport:
        started = self._clock.monotonic()
        current = self._index.current()
        # A damaged current generation (or one served in place of it) is no base to edit,
        # nor a reason to say "unchanged": rebuild from the notes.
        damaged = self._index.check_current() if current is not None else []
        if damaged:
            warnings.append(f"index rebuilt from the notes: {damaged[0]}")
        semantic = self._semantic_ready(warnings)
        model_id = self._embedder.model_id if semantic else None
        chunking = self._source.chunking
        rechunk = current is not None and not damaged and current.chunking != chunking
        if rechunk and not full:
            warnings.append(f"index rebuilt from the notes: chunking changed "
                            f"({current.chunking or 'unrecorded'} -> {chunking})")
        if current is not None and not damaged and current.model_id and model_id \
                and current.model_id != model_id:
            warnings.append(f"index re-embedded: the embedding model changed "
                            f"({current.model_id} -> {model_id})")
        reusable = current is not None and not full and current.model_id == model_id \
            and not damaged and not rechunk
        previous = dict(current.manifest) if reusable else {}
        scan = self._source.scan()
        warnings.extend(scan.warnings)
        diff = diff_scan(previous, scan.files)
        docs, unreadable = self._read(diff.added + diff.suspect, warnings)
        changed = [d for d in docs if d.note.path not in previous
                   or previous[d.note.path].content_hash != d.note.content_hash]
        touched = [d for d in docs if d not in changed]  # stat moved, content the same
        removed = [*diff.removed, *(p for p in unreadable if p in previous)]
        if not (changed or removed or touched) and current is not None and not force:
            return StageReport(stage="index", outcome="unchanged", generation=current.id,
                               previous=current.id, reason="no note changed",
                               seconds=self._clock.monotonic() - started)
        stage = self._index.stage(current.id if reusable else None)
        try:
            stage.remove([d.note.path for d in (*changed, *touched)] + removed)
            staged: dict[str, NoteDocument] = {}  # each note as staged, under its final id
            counts = self._add_all(stage, [*changed, *touched], scan.files, semantic, warnings,
                                   progress, staged)
            expected = {p: e for p, e in stage.manifest().items()}
            validation = self._validate(stage, expected, semantic, list(staged.values()))
            if not validation.ok:
                stage.discard()
                return StageReport(
                    stage="index", outcome="kept-last-good", generation=current.id if current else None,
                    previous=current.id if current else None, validation=validation,
                    reason="; ".join(f"{c.name}: {c.detail}" for c in validation.failures),
                    seconds=self._clock.monotonic() - started)
            info = stage.publish(model_id, self._embedder.dimension if semantic else None,
                                 validation.as_dict(), chunking)
        except BaseException:
            stage.discard()
            raise
        return StageReport(
            stage="index", outcome="published", generation=info.id,
            previous=current.id if current else None, validation=validation,
            added=len([d for d in changed if d.note.path not in previous]),
            changed=len([d for d in changed if d.note.path in previous]),
            removed=len(removed), embedded=counts[0], reused_vectors=counts[1],
            seconds=self._clock.monotonic() - started)

    def _semantic_ready(self, warnings: list[str]) -> bool:
        self._embedder.warm()
        if self._embedder.wait_ready(300.0):
            return True
        warnings.append(f"embedding model unavailable ({self._embedder.state()}): "
                        "index built without vectors; semantic search is off")
        return False

    def _read(self, paths: Sequence[str], warnings: list[str]) -> tuple[list[NoteDocument], list[str]]:
        docs, unreadable = [], []
        for path in paths:
            try:
                doc = self._source.load(path)
            except (InvalidRequest, NotFound) as exc:
                warnings.append(f"skipped {path}: {exc}")
                unreadable.append(path)
                continue
            warnings.extend(doc.warnings)
            docs.append(doc)
        return docs, unreadable

    def _add_all(self, stage: IndexStage, docs: list[NoteDocument], files, semantic: bool,
                 warnings: list[str], progress: Progress,
                 staged: dict[str, NoteDocument]) -> tuple[int, int]:
        embedded = reused = 0
        batch = self.policy.embed_batch
        total = len(docs)
        i = 0
        while i < total:
            group = [docs[i]]
            size = len(docs[i].chunks)
            while i + len(group) < total and size < batch:
                group.append(docs[i + len(group)])
                size += len(group[-1].chunks)
            vectors: dict[str, Sequence[float]] = {}
            if semantic:
                e, r, vectors = self._vectors_for(group)
                embedded, reused = embedded + e, reused + r
            for doc in group:
                self._add_one(stage, doc, files.get(doc.note.path),
                              vectors if semantic else None, warnings, staged)
            i += len(group)
            progress("index", i, total)
        return embedded, reused

    def _vectors_for(self, docs: list[NoteDocument]) -> tuple[int, int, dict[str, Sequence[float]]]:
        hashes = list(dict.fromkeys(c.hash for d in docs for c in d.chunks))
        known = self._cache.get_many(self._embedder.model_id, hashes)
        missing = [h for h in hashes if h not in known]
        if missing:
            text_of = {c.hash: c.indexed_text for d in docs for c in d.chunks}
            fresh = self._embedder.embed_documents([text_of[h] for h in missing])
            new = {h: v for h, v in zip(missing, fresh)}
            self._cache.put_many(self._embedder.model_id, new)
            known.update(new)
        return len(missing), len(hashes) - len(missing), known

    def _add_one(self, stage: IndexStage, doc: NoteDocument, scanned: SourceFile | None,
                 vectors: dict[str, Sequence[float]] | None, warnings: list[str],
                 staged: dict[str, NoteDocument]) -> None:
        """Stage a note under the first id it wants that it may keep (into staged too).

        Who keeps a contested id depends on the two notes only (identity.keeps_over), so
        the order notes arrive in, over one refresh or many, never changes an id: a note
        that keeps an id another holds takes it, and the other moves on to its next one.
        """
        # A file that vanished after the scan keeps size/mtime 0: the next scan re-reads it.
        entry = ManifestEntry(path=doc.note.path, content_hash=doc.note.content_hash,
                              size=scanned.size if scanned else 0,
                              mtime_ns=scanned.mtime_ns if scanned else 0)
        ordered = self._ordered(doc, vectors)
        lost: list[tuple[str, str]] = []
        for memory_id in identity_claims(doc.note):
            attempt = _renamed(doc, memory_id)
            try:
                stage.add(attempt, entry, ordered)
            except DuplicateNote as clash:
                holder = self._contender(clash.holder)
                if holder is None or not keeps_over(doc.note, holder.note, memory_id):
                    lost.append((memory_id, clash.holder or "another note"))
                    continue
                held = stage.manifest().get(holder.note.path)
                stage.remove([holder.note.path])
                stage.add(attempt, entry, ordered)
                self._add_one(stage, holder, _scanned(held), self._vectors_of(holder, vectors),
                              warnings, staged)
            if lost:
                wanted, other = lost[0]
                warnings.append(f"{doc.note.path}: memory_id {wanted!r} is already used by "
                                f"{other}, which keeps it; indexed as {memory_id!r}")
            staged[doc.note.path] = attempt
            return
        raise StoreError(f"{doc.note.path}: every memory_id it could take is taken")

    def _contender(self, path: str | None) -> NoteDocument | None:
        """The note holding a contested id, as its file reads now (None if it cannot be)."""
        if path is None:
            return None
        try:
            return self._source.load(path)
        except (InvalidRequest, NotFound):
            return None

    def _vectors_of(self, doc: NoteDocument, vectors) -> dict[str, Sequence[float]] | None:
        return None if vectors is None else self._vectors_for([doc])[2]

    @staticmethod
    def _ordered(doc: NoteDocument, vectors):
        if vectors is None:
            return None
        return [vectors[c.hash] for c in doc.chunks]

    def _validate(self, stage: IndexStage, expected: dict[str, ManifestEntry], semantic: bool,
                  added: list[NoteDocument]) -> ValidationReport:
        facts = stage.facts()
        checks = [
            Check(name="integrity", ok=facts.integrity == "ok", detail=facts.integrity),
            Check(name="notes-match-manifest", ok=facts.notes == len(expected),
                  detail=f"{facts.notes} notes, manifest lists {len(expected)}"),
            Check(name="every-note-present", ok=facts.paths == frozenset(expected),
                  detail=_missing_detail(facts.paths, frozenset(expected))),
        ]
        if semantic:
            checks.append(Check(name="vectors", ok=facts.vectors == facts.chunks,
                                detail=f"{facts.vectors} vectors for {facts.chunks} chunks"))
            checks.append(Check(name="dimension",
                                ok=facts.chunks == 0 or facts.dimension == self._embedder.dimension,
                                detail=f"{facts.dimension} (model {self._embedder.dimension})"))
        checks.append(self._self_query(stage, semantic, added))
        return ValidationReport(checks=tuple(checks))

    def _self_query(self, stage: IndexStage, semantic: bool, added: list[NoteDocument]) -> Check:
        # Probe with a chunk that has real words: `---` or a lone fence matches nothing.
        probe = next((c for d in added for c in d.chunks if len(content_terms(c.text)) >= 2), None)
        if probe is None:
            return Check(name="self-query", ok=True, detail="no new chunk to probe")
        vector = self._embedder.embed_query(probe.indexed_text) if semantic else None
        lexical, nearest = stage.probe(probe.indexed_text, vector, 10)
        ok = probe.chunk_id in lexical and (not semantic or probe.chunk_id in nearest)
        found = []
        if probe.chunk_id not in lexical:
            found.append("lexically")
        if semantic and probe.chunk_id not in nearest:
            found.append("semantically")
        detail = f"{probe.chunk_id} found" if ok else f"{probe.chunk_id} not found {' or '.join(found)}"
        return Check(name="self-query", ok=ok, detail=detail)

    # -- graph ---------------------------------------------------------------------------

    def _graph_stage(self, force: bool, warnings: list[str], progress: Progress) -> StageReport:
        started = self._clock.monotonic()
        if self._graphs is None:
            return StageReport(stage="graph", outcome="skipped", reason="no graph builder")
        docs, _ = self._read(sorted(self._source.scan().files), [])
        progress("graph", 0, 1)
        previous = self._graph_previous()
        try:
            stage = self._graphs.build(docs)
        except (StoreError, Unavailable) as exc:
            return StageReport(stage="graph", outcome="kept-last-good", generation=previous,
                               previous=previous, reason=f"graph build failed: {exc}",
                               seconds=self._clock.monotonic() - started)
        validation = self._validate_graph(stage.facts(), docs, force)
        if not validation.ok:
            stage.discard()
            return StageReport(stage="graph", outcome="kept-last-good", generation=previous,
                               previous=previous, validation=validation,
                               reason="; ".join(f"{c.name}: {c.detail}" for c in validation.failures),
                               seconds=self._clock.monotonic() - started)
        info = stage.publish()
        progress("graph", 1, 1)
        return StageReport(stage="graph", outcome="published", generation=info.id,
                           previous=previous, validation=validation,
                           seconds=self._clock.monotonic() - started)

    def _graph_previous(self) -> str | None:
        info = self._graphs.current()
        return info.id if info else None

    def _validate_graph(self, facts, docs: list[NoteDocument], force: bool) -> ValidationReport:
        ids = frozenset(d.note.memory_id for d in docs)
        missing = ids - facts.page_notes
        checks = [
            Check(name="built", ok=facts.nodes > 0, detail=f"{facts.nodes} nodes, {facts.edges} edges"),
            Check(name="page-node-per-note", ok=not missing,
                  detail=f"{len(missing)} notes without a page node" + (
                      f", e.g. {sorted(missing)[0]}" if missing else "")),
            Check(name="no-dangling-edge", ok=facts.dangling_edges == 0,
                  detail=f"{facts.dangling_edges} dangling edges"),
        ]
        before = self._previous_graph_notes()
        if before and not force:
            ratio = len(facts.page_notes) / before
            checks.append(Check(name="shrink", ok=ratio >= 1 - self.policy.max_graph_shrink,
                                detail=f"{len(facts.page_notes)} notes now, {before} before "
                                       "(use force to accept a large shrink)"))
        return ValidationReport(checks=tuple(checks))

    def _previous_graph_notes(self) -> int:
        info = self._graphs.current()
        return info.notes if info else 0

    def _collect(self, warnings: list[str]) -> None:
        for store in (self._index, self._graphs):
            if store is None:
                continue
            try:
                store.collect(self.policy.keep_generations, self.policy.grace_seconds)
            except StoreError as exc:
                warnings.append(f"old generations not collected: {exc}")


def _missing_detail(have: frozenset[str], want: frozenset[str]) -> str:
    missing, extra = sorted(want - have), sorted(have - want)
    if not (missing or extra):
        return "all present"
    return f"missing {missing[:3]} extra {extra[:3]}"


def _scanned(entry: ManifestEntry | None) -> SourceFile | None:
    return SourceFile(path=entry.path, size=entry.size, mtime_ns=entry.mtime_ns) if entry else None


def _renamed(doc: NoteDocument, memory_id: str) -> NoteDocument:
    if memory_id == doc.note.memory_id:
        return doc
    chunks = tuple(Chunk.create(memory_id=memory_id, path=c.path, heading=c.heading,
                                start_line=c.start_line, end_line=c.end_line, text=c.text,
                                context=c.context, ordinal=c.ordinal) for c in doc.chunks)
    return evolve(doc, note=evolve(doc.note, memory_id=memory_id), chunks=chunks)
