"""One contract per port, run against the in-memory fake AND the real adapter, so the fake
cannot drift: whatever a unit test learns from a fake must also hold for the product."""

from __future__ import annotations

import json
import math
import re
import threading
import types
import typing
from enum import Enum
from pathlib import Path

import attrs
import numpy as np
import pytest
from attrs import evolve

from memory.adapters.embeddings import SentenceTransformerEmbedder
from memory.adapters.graphify import GraphifyGenerations, GraphifyGraph
from memory.adapters.graphify.stored import StoredGraphGenerations
from memory.adapters.inmemory import (DeterministicEmbedder, InMemoryChunkStore,
                                      InMemoryEmbeddingCache, InMemoryFeedbackLog,
                                      InMemoryGenerations, InMemoryGraph, InMemoryIndex,
                                      InMemoryLock, InMemoryNoteSource, InMemoryRefreshHistory,
                                      InMemoryVectorIndex)
from memory.adapters.markdown import MarkdownNoteSource
from memory.adapters.postgres import (PostgresDatabase, PostgresEmbeddingCache, PostgresGenerations,
                                      PostgresGraphStore, PostgresLexicalIndex, PostgresNoteCatalogue,
                                      PostgresRefreshLock, PostgresVectorIndex)
from memory.adapters.sqlite import (SqliteEmbeddingCache, SqliteGenerations, SqliteIndex,
                                    SqliteLexicalIndex, SqliteNoteCatalogue, SqliteVectorIndex)
from memory.adapters.statefiles import (FileRefreshLock, JsonlFeedbackLog, JsonlRefreshHistory)
from memory.domain.errors import InvalidRequest, NotFound, RefreshBusy, Unavailable
from memory.domain.model_state import EmbedderState
from memory.domain.notes import Chunk, NoteDocument
from memory.domain.refresh import ManifestEntry
from memory.domain.scope import ScopeFilter, StatusFilter
from memory.ports.embedder import Embedder
from memory.ports.embedding_cache import EmbeddingCache
from memory.ports.errors import DuplicateNote, EmbedderUnavailable, StoreError
from memory.ports.graph_generations import GraphGenerations
from memory.ports.graph_provider import GraphProvider
from memory.ports.index_generations import IndexGenerations
from memory.ports.journal import FeedbackLog, RefreshHistory
from memory.ports.lexical_index import LexicalIndex
from memory.ports.lock import RefreshLock
from memory.ports.note_catalogue import NoteCatalogue
from memory.ports.note_source import NoteSource
from memory.ports.vector_index import VectorIndex

ANY = ScopeFilter(status=StatusFilter.ANY)
DIM = 64

VAULT = {
    "Repos/alpha/Notes/Retry policy.md": """\
---
memory_id: retry-policy
title: Retry Policy
aliases: [Backoff Rules]
related: ["[[Deploy checklist]]"]
supersedes: [retry-old]
tags: [retry]
---
# Retry policy

The capture worker keeps retrying with jittered backoff; retries stop after three
attempts. Every retry is logged, and the retry counter resets after an hour.
""",
    "Repos/alpha/Notes/Retry old.md": """\
---
memory_id: retry-old
superseded_by: [retry-policy]
---
# Old retry rule

Retrying forever was the old rule.
""",
    "Repos/beta/Notes/Retry budget.md": "# Retry budget\n\nThe beta service retries once.\n",
    "Repos/nexus/Notes/Deploy freeze.md": """\
# Deploy freeze

NX-401 froze deploys of the nexus gateway until the certificate chain was fixed.
""",
    "Repos/nexus/Notes/Gateway certificates.md": """\
# Gateway certificates

NX-410 renews the nexus gateway certificate chain; the deploy freeze is elsewhere.
""",
    "Tools/Windows launcher.md": """\
# Windows launcher

The agent starts without a console through scripts/launch-hidden.vbs on Windows.
""",
    "Tools/Shell launcher.md": """\
# Shell launcher

On Linux the agent starts from scripts/launch.sh; no hidden window is needed.
""",
    "Repos/ci/Notes/Artifact uploads.md": """\
# Artifact uploads

```
ECONNRESET while uploading artifact
```

The storage proxy drops idle sockets; uploads now reconnect.
""",
    "Decisions/Deploy checklist.md": """\
---
memory_id: deploy-checklist
title: Deploy Checklist
---
# Deploy checklist

Check [[Backoff Rules]] and [[Rollback]] before a release.
""",
    "Decisions/Rollback.md": "# Rollback\n\nSee [[Canary]] for the first step.\n",
    "Decisions/Canary.md": "# Canary\n\nRoll out to the café cluster first.\n",
    # "battery's": Porter stems the lone "s" to an empty term, which no store may choke on.
    "Workflows/Orphan.md": "# Orphan\n\nNo links at all, only zebras and a battery's charge.\n",
}
CANARY, ROLLBACK, ORPHAN = "decisions/canary", "decisions/rollback", "workflows/orphan"


def write_vault(root: Path, files: dict[str, str] = VAULT) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def vault(tmp_path_factory) -> Path:
    return write_vault(tmp_path_factory.mktemp("vault"))


@pytest.fixture(scope="module")
def docs(vault) -> list[NoteDocument]:
    """The vault parsed once by the real Markdown reader, shared by both sides of a contract."""
    source = MarkdownNoteSource(vault)
    return [source.load(path) for path in sorted(VAULT)]


def by_path(docs: list[NoteDocument], path: str) -> NoteDocument:
    return next(d for d in docs if d.note.path == path)


def cosine(a, b) -> float:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


# -- NoteSource ---------------------------------------------------------------------------


class SourceKit:
    """A NoteSource plus the two ways its root changes: a note edited, a note deleted."""

    def __init__(self, kind: str, root: Path):
        self.root = write_vault(root)
        self._reader = MarkdownNoteSource(root)
        if kind == "markdown":
            self.source: NoteSource = self._reader
        else:
            self.source = InMemoryNoteSource(
                [self._reader.load(p) for p in sorted(VAULT)], root=str(root))

    def edit(self, rel: str, text: str) -> None:
        (self.root / rel).write_text(text, encoding="utf-8")
        if isinstance(self.source, InMemoryNoteSource):
            self.source.put(self._reader.load(rel))

    def delete(self, rel: str) -> None:
        (self.root / rel).unlink()
        if isinstance(self.source, InMemoryNoteSource):
            self.source.delete(rel)


@pytest.fixture(params=["inmemory", "markdown"])
def notes(request, tmp_path) -> SourceKit:
    return SourceKit(request.param, tmp_path / "root")


def test_note_source_lists_and_loads_every_note(notes, docs):
    assert isinstance(notes.source, NoteSource)
    assert Path(notes.source.root) == notes.root.resolve()
    scan = notes.source.scan()
    assert set(scan.files) == set(VAULT)
    assert all(f.path == p for p, f in scan.files.items())
    for doc in docs:
        assert notes.source.load(doc.note.path) == doc


def test_note_source_scan_sees_an_edit_and_a_deletion(notes):
    rel = "Decisions/Canary.md"
    before = notes.source.scan().files[rel]
    old_hash = notes.source.load(rel).note.content_hash
    notes.edit(rel, "# Canary\n\nRoll out to one cluster, then wait a whole day.\n")
    after = notes.source.scan().files[rel]
    assert (after.size, after.mtime_ns) != (before.size, before.mtime_ns)
    assert notes.source.load(rel).note.content_hash != old_hash
    notes.delete(rel)
    assert rel not in notes.source.scan().files
    with pytest.raises(NotFound):
        notes.source.load(rel)


@pytest.mark.parametrize("path", ["../outside.md", "/etc/passwd.md", "Decisions/../../x.md",
                                  "~/notes.md", "C:/notes.md", "", ".ai-memory/x.md",
                                  "Decisions/.hidden.md", "Decisions/Canary.txt"])
def test_note_source_refuses_paths_that_are_not_notes_of_the_root(notes, path):
    with pytest.raises(InvalidRequest):
        notes.source.load(path)


def test_note_source_reads_windows_separators_and_reports_missing_notes(notes, docs):
    assert notes.source.load("Decisions\\Canary.md") == by_path(docs, "Decisions/Canary.md")
    with pytest.raises(NotFound):
        notes.source.load("Decisions/Missing.md")


# -- IndexGenerations + LexicalIndex + NoteCatalogue + VectorIndex ------------------------


class IndexKit:
    """Generations and the three readers over them (one adapter object may play both the
    lexical and the catalogue role: the kit asks for each role on its own); vectors from the
    DeterministicEmbedder."""

    embedder = DeterministicEmbedder(dimension=DIM)

    def __init__(self, kind: str, state: Path, postgres_url: str | None = None):
        if kind == "postgres":
            shared = PostgresDatabase(postgres_url)
            self.generations = PostgresGenerations(shared)
            self.lexical = PostgresLexicalIndex(shared)
            self.catalogue = PostgresNoteCatalogue(shared)
            self.vectors = PostgresVectorIndex(shared)
        elif kind == "inmemory":
            shared = InMemoryIndex()
            self.generations: IndexGenerations = InMemoryGenerations(shared)
            self.lexical: LexicalIndex = InMemoryChunkStore(shared)
            self.catalogue: NoteCatalogue = InMemoryChunkStore(shared)
            self.vectors: VectorIndex = InMemoryVectorIndex(shared)
        else:
            shared = SqliteIndex(state)
            self.generations = SqliteGenerations(shared)
            self.lexical = SqliteLexicalIndex(shared)
            self.catalogue = SqliteNoteCatalogue(shared)
            self.vectors = SqliteVectorIndex(shared)

    @classmethod
    def vectors_of(cls, doc: NoteDocument) -> list[list[float]]:
        return cls.embedder.embed_documents([c.indexed_text for c in doc.chunks])

    @staticmethod
    def entry(doc: NoteDocument) -> ManifestEntry:
        return ManifestEntry(path=doc.note.path, content_hash=doc.note.content_hash,
                             size=len(doc.lines), mtime_ns=1)

    def stage_with(self, docs, base=None, vectors: bool = True):
        stage = self.generations.stage(base)
        for doc in docs:
            stage.add(doc, self.entry(doc), self.vectors_of(doc) if vectors else None)
        return stage

    def publish(self, docs, base=None, vectors: bool = True):
        stage = self.stage_with(docs, base, vectors)
        return stage.publish(self.embedder.model_id if vectors else None,
                             DIM if vectors else None, {"ok": True})


STORES = ["inmemory", "sqlite", "postgres"]


def _postgres_url(kind: str, request) -> str | None:
    return request.getfixturevalue("test_postgres").fresh() if kind == "postgres" else None


@pytest.fixture(params=STORES)
def index(request, tmp_path) -> IndexKit:
    return IndexKit(request.param, tmp_path / "state", _postgres_url(request.param, request))


@pytest.fixture(scope="module", params=STORES)
def built(request, tmp_path_factory, docs) -> IndexKit:
    """One published generation of the whole vault, for the read-only contracts."""
    kit = IndexKit(request.param, tmp_path_factory.mktemp(f"index-{request.param}"),
                   _postgres_url(request.param, request))
    kit.publish(docs)
    return kit


def test_index_adapters_implement_their_ports(built):
    assert isinstance(built.generations, IndexGenerations)
    assert isinstance(built.lexical, LexicalIndex)
    assert isinstance(built.catalogue, NoteCatalogue)
    assert isinstance(built.vectors, VectorIndex)


def test_nothing_published_means_nothing_found(index):
    assert index.generations.current() is None
    assert index.lexical.search("retry", ANY, 5) == []
    assert index.catalogue.notes() == [] and index.catalogue.note("retry-policy") is None
    assert index.catalogue.find("Retry Policy") == []
    assert list(index.catalogue.chunks_of("retry-policy")) == []
    assert tuple(index.catalogue.lines("retry-policy")) == ()
    assert index.vectors.search([1.0] + [0.0] * (DIM - 1), ANY, 5) == []


def test_publish_switches_current_and_reports_what_it_holds(index, docs):
    chunks = sum(len(d.chunks) for d in docs)
    stage = index.stage_with(docs)
    facts = stage.facts()
    assert (facts.notes, facts.chunks, facts.vectors, facts.dimension, facts.integrity) == \
        (len(docs), chunks, chunks, DIM, "ok")
    assert facts.paths == frozenset(VAULT)
    assert index.generations.current() is None  # nothing is visible before publish
    info = stage.publish(index.embedder.model_id, DIM, {"ok": True})
    current = index.generations.current()
    assert info.id == stage.id == current.id
    assert (current.notes, current.chunks, current.vectors) == (len(docs), chunks, chunks)
    assert (current.model_id, current.dimension) == (index.embedder.model_id, DIM)
    assert set(current.manifest) == set(VAULT)
    assert current.manifest["Decisions/Canary.md"] == \
        index.entry(by_path(docs, "Decisions/Canary.md"))
    second = index.publish(docs[:3])
    assert index.generations.current().id == second.id != info.id
    assert len(index.catalogue.notes(ANY)) == 3


def test_a_stage_starts_from_its_base_and_discard_leaves_current_serving(index, docs):
    first = index.publish(docs)
    stage = index.generations.stage(first.id)
    assert set(stage.manifest()) == set(VAULT)
    stage.remove(["Decisions/Canary.md", "Not/indexed.md"])
    assert "Decisions/Canary.md" not in stage.manifest()
    facts = stage.facts()
    assert facts.notes == len(docs) - 1 and "Decisions/Canary.md" not in facts.paths
    assert facts.vectors == facts.chunks
    stage.discard()
    assert index.generations.current().id == first.id
    assert index.catalogue.note(CANARY) is not None
    with pytest.raises(StoreError):
        stage.add(docs[0], index.entry(docs[0]), None)  # a discarded stage is finished


def test_a_published_stage_is_sealed(index, docs):
    stage = index.stage_with(docs[:2])
    stage.publish(index.embedder.model_id, DIM, {})
    with pytest.raises(StoreError):
        stage.add(docs[2], index.entry(docs[2]), index.vectors_of(docs[2]))


def test_stage_refuses_an_unknown_base(index):
    with pytest.raises(StoreError):
        index.generations.stage("no-such-generation")


def test_one_memory_id_on_two_paths_is_refused_and_the_stage_stays_usable(index, docs):
    stage = index.stage_with(docs)
    canary = by_path(docs, "Decisions/Canary.md")
    twin = evolve(canary, note=evolve(canary.note, path="Decisions/Canary copy.md"),
                  chunks=tuple(evolve(c, path="Decisions/Canary copy.md") for c in canary.chunks))
    with pytest.raises(DuplicateNote):
        stage.add(twin, index.entry(twin), index.vectors_of(twin))
    facts = stage.facts()
    assert facts.notes == len(docs) and "Decisions/Canary copy.md" not in facts.paths
    assert facts.vectors == facts.chunks
    stage.publish(index.embedder.model_id, DIM, {})
    assert [n.path for n in index.catalogue.find(CANARY)] == ["Decisions/Canary.md"]


def test_adding_a_path_again_replaces_what_it_held(index, docs):
    canary = by_path(docs, "Decisions/Canary.md")
    stage = index.stage_with(docs)
    stage.add(canary, index.entry(canary), index.vectors_of(canary))
    renamed = evolve(canary, note=evolve(canary.note, memory_id="canary-renamed"), chunks=tuple(
        Chunk.create(memory_id="canary-renamed", path=c.path, heading=c.heading,
                     start_line=c.start_line, end_line=c.end_line, text=c.text,
                     context=c.context, ordinal=c.ordinal) for c in canary.chunks))
    stage.add(renamed, index.entry(renamed), index.vectors_of(renamed))
    facts = stage.facts()
    chunks = sum(len(d.chunks) for d in docs)
    assert (facts.notes, facts.chunks, facts.vectors) == (len(docs), chunks, chunks)
    stage.publish(index.embedder.model_id, DIM, {})
    assert index.catalogue.note(CANARY) is None
    assert [n.memory_id for n in index.catalogue.find("Decisions/Canary.md")] == ["canary-renamed"]


def test_vectors_must_match_the_chunks(index, docs):
    stage = index.generations.stage(None)
    doc = by_path(docs, "Repos/alpha/Notes/Retry policy.md")
    with pytest.raises(StoreError):
        stage.add(doc, index.entry(doc), index.vectors_of(doc) * 2)


def test_probe_finds_a_staged_chunk_both_ways(index, docs):
    stage = index.stage_with(docs)
    chunk = by_path(docs, "Tools/Windows launcher.md").chunks[0]
    vector = index.embedder.embed_query(chunk.indexed_text)
    lexical, nearest = stage.probe(chunk.indexed_text, vector, 5)
    assert chunk.chunk_id in lexical and nearest[0] == chunk.chunk_id
    assert stage.probe(chunk.indexed_text, None, 5)[1] == []
    stage.discard()


@pytest.mark.parametrize("rebuilt", [False, True], ids=["in-place", "rebuilt"])
def test_a_snapshot_keeps_one_generation_while_another_is_published(index, docs, rebuilt):
    """What a use case holds for one operation: a publish by someone else (here another
    thread) is not seen until the block ends, whatever the store does to publish."""
    first = index.publish(docs)
    published = {}

    def publish_elsewhere() -> None:
        stage = index.generations.stage(None if rebuilt else first.id)
        if rebuilt:
            for doc in docs[:3]:
                stage.add(doc, index.entry(doc), index.vectors_of(doc))
        else:
            stage.remove([d.note.path for d in docs[3:]])
        published["info"] = stage.publish(index.embedder.model_id, DIM, {"ok": True})

    with index.generations.snapshot() as snapshot:
        assert snapshot.id == first.id and snapshot.generation.notes == len(docs)
        thread = threading.Thread(target=publish_elsewhere)
        thread.start()
        thread.join()
        assert index.generations.current().id == first.id
        assert len(index.catalogue.notes(ANY)) == len(docs)
        assert index.catalogue.note(CANARY) is not None
        assert index.lexical.search("zebras", ANY, 5)  # Orphan is among docs[3:]
    assert index.generations.current().id == published["info"].id
    assert index.lexical.search("zebras", ANY, 5) == []
    assert len(index.catalogue.notes(ANY)) == 3


def test_a_snapshot_of_nothing_published_names_no_generation(index, docs):
    with index.generations.snapshot() as snapshot:
        assert snapshot.id is None and snapshot.generation is None
        assert index.catalogue.notes() == []
    first = index.publish(docs)
    with index.generations.snapshot() as snapshot:
        assert snapshot.id == first.id


def test_collect_keeps_current_and_honours_the_grace_period(index, docs):
    for n in (2, 3, 4):
        index.publish(docs[:n])
    current = index.generations.current().id
    assert index.generations.collect(keep=1, grace_seconds=3600) == []
    removed = index.generations.collect(keep=1, grace_seconds=0)
    assert len(removed) == 2 and not any(current in r for r in removed)
    assert index.generations.current().id == current
    assert len(index.catalogue.notes(ANY)) == 4
    assert index.generations.check_current() == []


# LexicalIndex ----------------------------------------------------------------------------

@pytest.mark.parametrize(("query", "path"), [
    ("NX-401", "Repos/nexus/Notes/Deploy freeze.md"),
    ("NX-410", "Repos/nexus/Notes/Gateway certificates.md"),
    ("scripts/launch-hidden.vbs", "Tools/Windows launcher.md"),
    ("ECONNRESET while uploading artifact", "Repos/ci/Notes/Artifact uploads.md"),
    ("zebras", "Workflows/Orphan.md"),
    ("cafe", "Decisions/Canary.md"),  # diacritics folded
    ("batteries", "Workflows/Orphan.md"),  # inflections meet (Porter: batteri)
])
def test_search_ranks_the_note_holding_the_words_first(built, query, path):
    hits = built.lexical.search(query, ANY, 5)
    assert hits and hits[0].note.path == path
    assert all(a.score >= b.score for a, b in zip(hits, hits[1:]))


def test_a_query_of_stopwords_only_still_matches(built):
    assert built.lexical.search("the", ANY, 5)


def test_search_returns_the_indexed_chunk_and_note(built, docs):
    doc = by_path(docs, "Tools/Windows launcher.md")
    hit = built.lexical.search("console", ANY, 1)[0]
    assert hit.chunk == doc.chunks[0] and hit.note == doc.note


def test_search_applies_the_scope_before_ranking_and_the_limit(built):
    unscoped = built.lexical.search("retry counter resets", ANY, 10)
    assert unscoped[0].note.memory_id == "retry-policy"
    beta = built.lexical.search("retry counter resets",
                               ScopeFilter(repository="beta", status=StatusFilter.ANY), 1)
    assert [h.note.path for h in beta] == ["Repos/beta/Notes/Retry budget.md"]
    assert len(built.lexical.search("retry", ANY, 2)) == 2
    assert built.lexical.search("retry", ANY, 0) == []
    under = built.lexical.search("retry", ScopeFilter(path_prefix="repos/ALPHA",
                                                     status=StatusFilter.ANY), 10)
    assert under and all(h.note.path.startswith("Repos/alpha/") for h in under)


def test_search_leaves_out_superseded_notes_unless_asked(built):
    active = {h.note.memory_id for h in built.lexical.search("retrying rule", ScopeFilter(), 10)}
    every = {h.note.memory_id for h in built.lexical.search("retrying rule", ANY, 10)}
    assert "retry-old" not in active and "retry-old" in every


@pytest.mark.parametrize("query", ['"', "foo-bar", "NEAR(", "a\x00b", "", "   ", "AND OR NOT",
                                   "col:term", "'; DROP TABLE notes; --", "日本語", "x " * 300])
def test_search_never_fails_on_odd_text(built, query):
    assert isinstance(built.lexical.search(query, ANY, 5), list)


# NoteCatalogue ---------------------------------------------------------------------------

def test_notes_note_chunks_and_lines(built, docs):
    assert built.catalogue.notes(ANY) == sorted((d.note for d in docs), key=lambda n: n.path)
    alpha = built.catalogue.notes(ScopeFilter(repository="alpha", status=StatusFilter.ANY))
    assert {n.memory_id for n in alpha} >= {"retry-policy", "retry-old"}
    assert "repos/beta/notes/retry budget" not in {n.memory_id for n in alpha}
    doc = by_path(docs, "Repos/alpha/Notes/Retry policy.md")
    assert built.catalogue.note("retry-policy") == doc.note
    assert built.catalogue.note("no-such-note") is None
    assert list(built.catalogue.chunks_of("retry-policy")) == list(doc.chunks)
    assert tuple(built.catalogue.lines("retry-policy")) == doc.lines


def _every_field_set(value):
    """The value with each attrs field that holds its default given one of its own (a new
    field included, with no edit here): a store that forgets a field gives the default back."""
    changes = {}
    for spec in attrs.fields(attrs.resolve_types(type(value))):
        current = getattr(value, spec.name)
        if spec.default is attrs.NOTHING or current != spec.default:
            continue
        kind = spec.type
        if isinstance(kind, types.UnionType):  # `X | None`: a value of X
            (kind,) = set(typing.get_args(kind)) - {type(None)}
        if isinstance(kind, type) and issubclass(kind, Enum):
            changes[spec.name] = list(kind)[-1]
        elif typing.get_origin(kind) is tuple:
            changes[spec.name] = (f"{spec.name}-1", f"{spec.name}-2")
        elif kind is int:
            changes[spec.name] = 7
        elif kind is str:
            dated = re.search(r"created|updated|after|from|until|date", spec.name)
            changes[spec.name] = f"2026-05-0{len(changes) % 9 + 1}" if dated else f"{spec.name}-set"
        else:
            raise AssertionError(f"no test value for {spec.name}: {spec.type!r}")
    return evolve(value, **changes)


def test_every_field_of_a_note_and_its_chunks_comes_back_from_every_store(index, docs):
    # SQLite maps a note's fields to columns by hand (rows.NOTE_FIELDS), Postgres keeps them as
    # JSON: a field one store forgets comes back as its default and only this test says so.
    doc = by_path(docs, "Repos/alpha/Notes/Retry policy.md")
    note = _every_field_set(doc.note)
    full = evolve(doc, note=note, chunks=tuple(_every_field_set(c) for c in doc.chunks))
    assert {a.name for a in attrs.fields(type(note)) if getattr(note, a.name) == a.default} == set()
    index.publish([full])
    assert index.catalogue.note(note.memory_id) == note
    assert list(index.catalogue.chunks_of(note.memory_id)) == list(full.chunks)


@pytest.mark.parametrize("flt", [
    ScopeFilter(repository="alpha"), ScopeFilter(repository="ALPHA", status=StatusFilter.ANY),
    ScopeFilter(project="apollo"), ScopeFilter(ticket="nx-401"), ScopeFilter(root_scope="Work"),
    ScopeFilter(root_scope="personal", status=StatusFilter.ANY),
    ScopeFilter(path_prefix="repos/Alpha"), ScopeFilter(path_prefix="Repos/alpha/Notes/Retry"),
    ScopeFilter(status=StatusFilter.SUPERSEDED), ScopeFilter(status=StatusFilter.ARCHIVED),
    ScopeFilter(repository="nexus", path_prefix="Decisions", status=StatusFilter.ANY)],
    ids=repr)
def test_each_store_admits_exactly_the_notes_the_domain_rule_admits(built, docs, flt):
    expected = sorted((d.note for d in docs if flt.admits(d.note)), key=lambda n: n.path)
    assert built.catalogue.notes(flt) == expected


@pytest.mark.parametrize("name", ["retry-policy", "RETRY-POLICY", "Retry Policy",
                                  "backoff rules", "Repos/alpha/Notes/Retry policy.md",
                                  "repos/alpha/notes/retry policy", "Retry policy",
                                  "  Retry Policy  "])
def test_find_by_id_title_alias_path_or_file_name(built, name):
    assert [n.memory_id for n in built.catalogue.find(name)] == ["retry-policy"]


@pytest.mark.parametrize("name", ["Notes/X.MD", "notes/x.md", "Notes/X", "notes/x", "X", "x-note"])
def test_find_knows_a_note_whose_extension_is_upper_case_by_every_name(index, tmp_path, name):
    # One name rule for every store: `.MD` is as much a Markdown extension as `.md`.
    root = write_vault(tmp_path / "upper", {"Notes/X.MD": "---\nmemory_id: x-note\n---\n# X\n"})
    index.publish([MarkdownNoteSource(root).load("Notes/X.MD")])
    assert [n.memory_id for n in index.catalogue.find(name)] == ["x-note"]


def test_find_unknown_name_finds_nothing(built):
    assert built.catalogue.find("no such note") == [] and built.catalogue.find("") == []


# VectorIndex ------------------------------------------------------------------------------

def test_vector_search_puts_the_nearest_chunk_first(built, docs):
    chunk = by_path(docs, "Repos/nexus/Notes/Deploy freeze.md").chunks[0]
    hits = built.vectors.search(IndexKit.vectors_of(by_path(docs, chunk.path))[0], ANY, 5)
    assert hits[0].chunk == chunk and hits[0].score == pytest.approx(1.0, abs=1e-5)
    assert len(hits) == 5 and all(a.score >= b.score for a, b in zip(hits, hits[1:]))
    assert all(-1.0 - 1e-6 <= h.score <= 1.0 + 1e-6 for h in hits)


def test_vector_search_applies_the_scope_before_ranking(built, docs):
    alpha = by_path(docs, "Repos/alpha/Notes/Retry policy.md")
    vector = IndexKit.vectors_of(alpha)[0]
    beta = built.vectors.search(vector, ScopeFilter(repository="beta", status=StatusFilter.ANY), 1)
    assert [h.note.path for h in beta] == ["Repos/beta/Notes/Retry budget.md"]
    active = built.vectors.search(vector, ScopeFilter(), 20)
    assert "retry-old" not in {h.note.memory_id for h in active}
    assert built.vectors.search(vector, ANY, 0) == []


def test_a_generation_without_vectors_finds_nothing_by_vector(index, docs):
    index.publish(docs, vectors=False)
    assert index.generations.current().vectors == 0
    assert index.vectors.search(IndexKit.vectors_of(docs[0])[0], ANY, 5) == []
    assert index.lexical.search("zebras", ANY, 5)


# -- Embedder ------------------------------------------------------------------------------

TEXTS = ["The payments service retries failed webhooks with exponential backoff.",
         "ok", "", "---", "ALPHA-142 scripts/launch-hidden.vbs ECONNRESET",
         "Nightly backups copy the WAL to cold storage. " * 40, "Who owns the deploy pipeline?"]


@pytest.fixture(scope="module")
def onnx_cache(tmp_path_factory) -> Path:
    # The same folder for every module of this session, so the ONNX export happens once.
    shared = tmp_path_factory.getbasetemp() / "shared-model-cache"
    shared.mkdir(exist_ok=True)
    return shared


@pytest.fixture(scope="module", params=["deterministic", "sentence-transformer"])
def embedder(request, onnx_cache) -> Embedder:
    if request.param == "deterministic":
        return DeterministicEmbedder()
    model = SentenceTransformerEmbedder(cache_dir=onnx_cache)
    assert model.wait_ready(900), model.state()
    return model


def test_embedder_names_its_model_and_is_ready(embedder):
    assert isinstance(embedder, Embedder)
    assert isinstance(embedder.model_id, str) and embedder.model_id
    assert isinstance(embedder.dimension, int) and embedder.dimension > 0
    assert embedder.warm() is None
    assert embedder.wait_ready(5.0) and embedder.state() is EmbedderState.READY


def test_embedder_gives_one_unit_vector_per_text_in_order(embedder):
    batch = embedder.embed_documents(TEXTS)
    assert len(batch) == len(TEXTS)
    for text, vector in zip(TEXTS, batch):
        assert len(vector) == embedder.dimension
        assert all(math.isfinite(x) for x in vector)
        assert math.sqrt(sum(float(x) ** 2 for x in vector)) == pytest.approx(1.0, abs=1e-4)
        alone = embedder.embed_documents([text])[0]
        assert cosine(vector, alone) > 0.9999
    assert len(embedder.embed_documents([])) == 0
    assert cosine(batch[0], batch[6]) < 0.99


def test_embedder_query_vectors_match_document_vectors(embedder):
    for text in TEXTS[:3]:
        query = embedder.embed_query(text)
        assert len(query) == embedder.dimension
        assert cosine(query, embedder.embed_documents([text])[0]) > 0.9999
        assert cosine(query, embedder.embed_query(text)) > 0.999999


@pytest.fixture(params=["deterministic", "sentence-transformer"])
def failed_embedder(request, tmp_path) -> Embedder:
    if request.param == "deterministic":
        return DeterministicEmbedder(failure="no model")
    return SentenceTransformerEmbedder(model_dir=tmp_path / "empty", backend="torch")


def test_an_embedder_that_cannot_load_says_so_and_never_fakes_vectors(failed_embedder):
    assert not failed_embedder.wait_ready(60.0)
    assert failed_embedder.state() is EmbedderState.FAILED and failed_embedder.failure()
    with pytest.raises(EmbedderUnavailable):
        failed_embedder.embed_documents(["text"])
    with pytest.raises(EmbedderUnavailable):
        failed_embedder.embed_query("text")
    assert failed_embedder.dimension > 0 and failed_embedder.model_id


# -- EmbeddingCache ------------------------------------------------------------------------

@pytest.fixture(params=STORES)
def cache(request, tmp_path) -> EmbeddingCache:
    if request.param == "inmemory":
        return InMemoryEmbeddingCache()
    if request.param == "postgres":
        return PostgresEmbeddingCache(PostgresDatabase(_postgres_url("postgres", request)))
    return SqliteEmbeddingCache(tmp_path)


def test_embedding_cache_keeps_vectors_by_model_and_hash(cache):
    assert isinstance(cache, EmbeddingCache)
    assert cache.get_many("m", ["h1"]) == {}
    cache.put_many("m", {"h1": [0.5, -0.25, 1.0], "h2": np.array([1.0, 0.0, 0.0], np.float32)})
    got = cache.get_many("m", ["h1", "h2", "h3", "h1"])
    assert set(got) == {"h1", "h2"}
    assert list(got["h1"]) == [0.5, -0.25, 1.0] and list(got["h2"]) == [1.0, 0.0, 0.0]
    assert cache.get_many("other-model", ["h1"]) == {}
    cache.put_many("m", {"h1": [0.0, 1.0, 0.0]})
    assert list(cache.get_many("m", ["h1"])["h1"]) == [0.0, 1.0, 0.0]
    cache.put_many("m", {})
    assert cache.get_many("m", []) == {}


# -- RefreshLock ---------------------------------------------------------------------------

@pytest.fixture(params=["inmemory", "file", "postgres"])
def lock(request, tmp_path) -> RefreshLock:
    if request.param == "postgres":
        return PostgresRefreshLock(PostgresDatabase(_postgres_url("postgres", request)))
    return InMemoryLock() if request.param == "inmemory" else FileRefreshLock(tmp_path)


def _try_in_thread(lock: RefreshLock) -> BaseException | None:
    outcome: list[BaseException | None] = []

    def attempt():
        try:
            with lock.hold(0.05):
                outcome.append(None)
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            outcome.append(exc)

    worker = threading.Thread(target=attempt)
    worker.start()
    worker.join(10)
    return outcome[0]


def test_refresh_lock_admits_one_holder_at_a_time(lock):
    assert isinstance(lock, RefreshLock)
    with lock.hold(1.0):
        assert isinstance(_try_in_thread(lock), RefreshBusy)
        with pytest.raises(RefreshBusy):
            with lock.hold(0.0):  # nesting is refused too, never silently re-entered
                pass
    assert _try_in_thread(lock) is None


def test_refresh_lock_is_released_when_the_block_fails(lock):
    with pytest.raises(ZeroDivisionError):
        with lock.hold(1.0):
            1 / 0
    with lock.hold(0.0):
        pass


# -- FeedbackLog and RefreshHistory --------------------------------------------------------

RECORD = {"time": "2026-01-15T12:00:00Z", "query": "retry café", "stages": [{"ok": True}],
          "generation": {"index": "g1", "graph": None}, "count": 3}


@pytest.fixture(params=["inmemory", "jsonl"])
def journals(request, tmp_path) -> tuple[FeedbackLog, RefreshHistory]:
    if request.param == "inmemory":
        return InMemoryFeedbackLog(), InMemoryRefreshHistory()
    return JsonlFeedbackLog(tmp_path), JsonlRefreshHistory(tmp_path)


def test_feedback_log_counts_what_was_appended(journals):
    feedback, _ = journals
    assert isinstance(feedback, FeedbackLog) and feedback.count() == 0
    feedback.append(RECORD)
    feedback.append({**RECORD, "count": 4})
    assert feedback.count() == 2


def test_refresh_history_returns_the_last_record_as_written(journals):
    _, history = journals
    assert isinstance(history, RefreshHistory) and history.last() is None
    history.append(RECORD)
    record = json.loads(json.dumps({**RECORD, "count": 4}))
    history.append(record)
    record["stages"].append("changed after append")
    assert history.last() == {**RECORD, "count": 4}


@pytest.mark.parametrize("bad", [{"when": object()}, {"values": {1, 2}}])
def test_journals_refuse_records_that_are_not_json(journals, bad):
    for journal in journals:
        with pytest.raises(StoreError):
            journal.append(bad)
    assert journals[0].count() == 0 and journals[1].last() is None


# -- GraphProvider + GraphGenerations ------------------------------------------------------


class GraphKit:
    """postgres: Graphify builds in the state folder, the graph is published into the
    database, and the provider reads it over a connection pool of its own (another server)."""

    def __init__(self, kind: str, root: Path, state: Path, postgres_url: str | None = None):
        if kind == "inmemory":
            fake = InMemoryGraph()
            self.generations: GraphGenerations = fake
            self.graph: GraphProvider = fake
        elif kind == "postgres":
            self.generations = StoredGraphGenerations(
                GraphifyGenerations(root, state), PostgresGraphStore(PostgresDatabase(postgres_url)))
            self.graph = GraphifyGraph(PostgresGraphStore(PostgresDatabase(postgres_url)))
        else:
            self.generations = GraphifyGenerations(root, state)
            self.graph = GraphifyGraph(state)


GRAPH_KINDS = ["inmemory", "graphify", "postgres"]


@pytest.fixture(params=GRAPH_KINDS)
def graphs(request, vault, tmp_path) -> GraphKit:
    return GraphKit(request.param, vault, tmp_path / "state", _postgres_url(request.param, request))


@pytest.fixture(scope="module", params=GRAPH_KINDS)
def graph(request, vault, docs, tmp_path_factory) -> GraphProvider:
    kit = GraphKit(request.param, vault, tmp_path_factory.mktemp(f"graph-{request.param}"),
                   _postgres_url(request.param, request))
    kit.generations.build(docs).publish()
    return kit.graph


def test_no_graph_published_means_no_signal_and_a_clear_error(graphs):
    assert isinstance(graphs.graph, GraphProvider)
    assert isinstance(graphs.generations, GraphGenerations)
    assert graphs.graph.current() is None
    assert graphs.graph.related(["retry-policy"], 5) == []
    assert graphs.graph.problems() and graphs.generations.check_current()
    with pytest.raises(Unavailable):
        graphs.graph.neighbors("retry-policy", 1)
    with pytest.raises(Unavailable):
        graphs.graph.path("retry-policy", CANARY)


def test_graph_publish_switches_current_and_discard_leaves_it(graphs, docs):
    stage = graphs.generations.build(docs)
    facts = stage.facts()
    assert facts.page_notes == frozenset(d.note.memory_id for d in docs)
    assert facts.dangling_edges == 0 and facts.edges > 0 and facts.nodes >= len(docs)
    assert graphs.graph.current() is None
    info = stage.publish()
    assert info.id == stage.id == graphs.graph.current().id
    assert info.notes == len(docs)
    assert graphs.graph.problems() == [] and graphs.generations.check_current() == []
    other = graphs.generations.build(docs[:4])
    other.discard()
    assert graphs.graph.current().id == info.id
    assert graphs.graph.current().notes == len(docs)


def test_related_lists_linked_notes_best_first_without_the_seeds(graph):
    ranked = graph.related(["retry-policy"], 10)
    ids = [m for m, _ in ranked]
    assert {"deploy-checklist", "retry-old"} <= set(ids[:3])
    assert "retry-policy" not in ids and ORPHAN not in ids
    assert all(a[1] >= b[1] > 0 for a, b in zip(ranked, ranked[1:]))
    assert len(graph.related(["retry-policy"], 1)) == 1
    assert graph.related(["retry-policy"], 0) == []
    assert graph.related(["no-such-note"], 5) == []
    both = [m for m, _ in graph.related(["retry-policy", "deploy-checklist"], 10)]
    assert "retry-policy" not in both and "deploy-checklist" not in both


def test_neighbors_of_a_note_name_its_links_with_their_relation(graph):
    found = {n.node: n for n in graph.neighbors("retry-policy", 1)}
    checklist = found["deploy-checklist"]
    assert (checklist.kind, checklist.path, checklist.depth) == \
        ("note", "Decisions/Deploy checklist.md", 1)
    hop = checklist.via[0]
    assert (hop.source, hop.relation, hop.target) == ("retry-policy", "related", "deploy-checklist")
    assert found["retry-old"].via[0].relation in ("supersedes", "superseded_by")
    assert found["repository:alpha"].kind == "repository"
    assert CANARY not in found
    linked = {n.node: n for n in graph.neighbors(ROLLBACK, 1)}
    assert linked[CANARY].via[0].relation == "references"
    deeper = {n.node: n for n in graph.neighbors("retry-policy", 3)}
    assert deeper[CANARY].depth == 3 and len(deeper[CANARY].via) == 3
    with pytest.raises(NotFound):
        graph.neighbors("no-such-note", 1)


def test_path_between_linked_notes_and_none_between_strangers(graph):
    found = graph.path("retry-policy", CANARY)
    assert found is not None and (found.source, found.target) == ("retry-policy", CANARY)
    chain = [{h.source, h.target} for h in found.hops]
    assert chain == [{"retry-policy", "deploy-checklist"}, {"deploy-checklist", ROLLBACK},
                     {ROLLBACK, CANARY}]
    assert [h.relation for h in found.hops] == ["related", "references", "references"]
    assert graph.path(CANARY, ORPHAN) is None
    with pytest.raises(NotFound):
        graph.path("retry-policy", "no-such-note")
    with pytest.raises(NotFound):
        graph.path("no-such-note", CANARY)

