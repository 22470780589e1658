"""SqliteGenerations and SqliteIndex on real files: stage, publish, switch, survive damage, collect."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import numpy as np
import pytest

from memory.adapters.sqlite import (SqliteGenerations, SqliteIndex, SqliteLexicalIndex,
                                    SqliteNoteCatalogue, SqliteVectorIndex)
from memory.domain.notes import Chunk, Note, NoteDocument, ScopeKind, Status, content_hash
from memory.domain.refresh import ManifestEntry
from memory.domain.scope import ScopeFilter, StatusFilter
from memory.ports.errors import DuplicateNote, StoreError
from memory.ports.index_generations import IndexGenerations, IndexStage

DIM = 16
ANY = ScopeFilter(status=StatusFilter.ANY)


def make_doc(memory_id: str, *texts: str, **fields) -> NoteDocument:
    path = fields.pop("path", f"notes/{memory_id}.md")
    title = fields.pop("title", memory_id.title())
    lines: list[str] = []
    chunks = []
    for i, text in enumerate(texts):
        start = len(lines) + 1
        lines.extend(text.split("\n"))
        chunks.append(Chunk.create(memory_id=memory_id, path=path, heading=f"Part {i}",
                                   start_line=start, end_line=len(lines), text=text,
                                   context=title, ordinal=i))
    note = Note(memory_id=memory_id, path=path, title=title, line_count=len(lines),
                content_hash=content_hash("\n".join(lines)), **fields)
    return NoteDocument(note=note, chunks=tuple(chunks), lines=tuple(lines))


def entry(doc: NoteDocument) -> ManifestEntry:
    return ManifestEntry(path=doc.note.path, content_hash=doc.note.content_hash, size=10,
                         mtime_ns=1_000)


def vectors_for(doc: NoteDocument, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    v = rng.standard_normal((len(doc.chunks), DIM))
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def publish(gens: SqliteGenerations, docs=(), base: str | None = None, remove=()):
    stage = gens.stage(base)
    stage.remove(remove)
    for i, doc in enumerate(docs):
        stage.add(doc, entry(doc), vectors_for(doc, i))
    return stage.publish("test-model", DIM, {"ok": True})


@pytest.fixture
def state(tmp_path):
    return tmp_path / ".ai-memory"


@pytest.fixture
def gens(state):
    index = SqliteIndex(state)
    yield SqliteGenerations(index)
    index.close()


def test_adapters_implement_their_ports(gens):
    assert isinstance(gens, IndexGenerations)
    stage = gens.stage(None)
    assert isinstance(stage, IndexStage)
    stage.discard()


def test_nothing_published_is_empty_not_an_error(gens, state):
    reader = SqliteIndex(state)
    lexical, catalogue = SqliteLexicalIndex(reader), SqliteNoteCatalogue(reader)
    assert gens.current() is None
    assert gens.check_current() == []
    assert lexical.search("anything", ANY, 5) == [] and catalogue.notes() == []


def test_stage_add_publish_and_read_back(gens, state):
    rich = make_doc("deploy-runbook", "# Deploy\nrun the deploy", "rollback steps here",
                    path="repos/Web App/deploy.md", title="Deploy Runbook",
                    root_scope="Work", scope_kind=ScopeKind.REPO, scope_id="web-app",
                    repository="web-app", project="apollo", ticket="ALPHA-7",
                    status=Status.NEEDS_REVIEW, created="2026-01-02", updated="2026-02-03",
                    review_after="2027-01-01", related=("other",), related_repos=("API",),
                    related_projects=("zeus",), supersedes=("old-runbook",),
                    tags=("ops", "deploy"), aliases=("Release Guide",), links=("other.md",))
    plain = make_doc("plain", "just a note")
    stage = gens.stage(None)
    stage.add(rich, entry(rich), vectors_for(rich, 1))
    stage.add(plain, entry(plain), [list(v) for v in vectors_for(plain, 2)])
    facts = stage.facts()
    assert (facts.notes, facts.chunks, facts.vectors, facts.dimension) == (2, 3, 3, DIM)
    assert facts.integrity == "ok"
    assert facts.paths == {rich.note.path, plain.note.path}
    lexical, semantic = stage.probe("rollback steps", vectors_for(rich, 1)[1], 3)
    assert lexical == ["deploy-runbook#1"] and semantic[0] == "deploy-runbook#1"

    info = stage.publish("test-model", DIM, {"ok": True})
    assert (info.notes, info.chunks, info.vectors, info.dimension, info.model_id) == (
        2, 3, 3, DIM, "test-model")
    current = gens.current()
    assert current.id == info.id == stage.id and current.schema_version == 2
    assert dict(current.manifest) == {rich.note.path: entry(rich), plain.note.path: entry(plain)}
    assert (state / "index" / f"index-{info.id}.sqlite").is_file()
    assert not list((state / "index" / "staging").iterdir())

    reader = SqliteIndex(state)
    catalogue = SqliteNoteCatalogue(reader)
    assert catalogue.note("deploy-runbook") == rich.note
    assert list(catalogue.chunks_of("deploy-runbook")) == list(rich.chunks)
    assert tuple(catalogue.lines("deploy-runbook")) == rich.lines
    assert catalogue.note("missing") is None and catalogue.lines("missing") == ()
    for name in ("DEPLOY-RUNBOOK", "repos/web app/deploy.md", "repos/Web App/deploy",
                 "deploy runbook", "release guide", "Deploy"):
        assert [n.memory_id for n in catalogue.find(name)] == ["deploy-runbook"], name
    assert catalogue.find("") == [] and catalogue.find("nope") == []


def test_probe_finds_staged_chunk_by_text_and_vector(gens):
    doc = make_doc("probe", "alpha beta gamma", "delta epsilon")
    stage = gens.stage(None)
    stage.add(doc, entry(doc), vectors_for(doc, 5))
    lexical, semantic = stage.probe("delta epsilon", vectors_for(doc, 5)[1], 5)
    assert lexical == ["probe#1"] and semantic[0] == "probe#1"
    assert stage.probe("delta", None, 5)[1] == []
    stage.discard()


def test_second_reader_switches_when_another_process_publishes(gens, state):
    first = publish(gens, [make_doc("one", "first note")])
    other = SqliteIndex(state)  # stands for another process
    other_lexical, other_catalogue = SqliteLexicalIndex(other), SqliteNoteCatalogue(other)
    assert SqliteGenerations(other).current().id == first.id
    assert other_lexical.search("second", ANY, 5) == []

    second = publish(gens, [make_doc("two", "second note")], base=first.id)
    assert SqliteGenerations(other).current().id == second.id
    assert [h.note.memory_id for h in other_lexical.search("second", ANY, 5)] == ["two"]
    assert {n.memory_id for n in other_catalogue.notes()} == {"one", "two"}


def test_stage_from_base_carries_manifest_and_remove_drops_everything(gens, state):
    keep, drop = make_doc("keep", "kept words"), make_doc("drop", "zanzibar unique", "more zanzibar")
    first = publish(gens, [keep, drop])
    stage = gens.stage(first.id)
    assert set(stage.manifest()) == {keep.note.path, drop.note.path}
    stage.remove([drop.note.path, "never/existed.md"])
    assert set(stage.manifest()) == {keep.note.path}
    facts = stage.facts()
    assert (facts.notes, facts.chunks, facts.vectors) == (1, 1, 1)
    assert stage.probe("zanzibar", vectors_for(drop, 1)[0], 5) == ([], ["keep#0"])
    stage.publish("test-model", DIM, {})

    index = SqliteIndex(state)
    assert SqliteLexicalIndex(index).search("zanzibar", ANY, 5) == []
    near = SqliteVectorIndex(index).search(vectors_for(drop, 1)[0], ANY, 5)
    assert [h.chunk.chunk_id for h in near] == ["keep#0"]
    assert SqliteNoteCatalogue(index).find("drop") == []


def test_adding_same_path_again_replaces_the_note(gens, state):
    first = publish(gens, [make_doc("n", "old words")])
    stage = gens.stage(first.id)
    stage.add(make_doc("n", "fresh words", "second part"), entry(make_doc("n", "x")), None)
    assert (stage.facts().chunks, stage.facts().vectors) == (2, 0)
    stage.publish("test-model", DIM, {})
    reader = SqliteIndex(state)
    lexical = SqliteLexicalIndex(reader)
    assert lexical.search("old", ANY, 5) == []
    assert [h.chunk.chunk_id for h in lexical.search("fresh", ANY, 5)] == ["n#0"]


def test_duplicate_memory_id_raises_and_leaves_the_stage_consistent(gens):
    stage = gens.stage(None)
    original = make_doc("same", "original text")
    stage.add(original, entry(original), vectors_for(original, 1))
    clash = make_doc("same", "clashing text", "two chunks", path="elsewhere/same.md")
    with pytest.raises(DuplicateNote):
        stage.add(clash, entry(clash), vectors_for(clash, 2))
    facts = stage.facts()
    assert (facts.notes, facts.chunks, facts.vectors, facts.integrity) == (1, 1, 1, "ok")
    assert stage.probe("clashing", None, 5) == ([], [])
    renamed = make_doc("elsewhere/same", "clashing text", path="elsewhere/same.md")
    stage.add(renamed, entry(renamed), vectors_for(renamed, 2))
    assert stage.facts().notes == 2
    stage.discard()


def test_bad_vectors_are_refused(gens):
    stage = gens.stage(None)
    doc = make_doc("v", "a", "b")
    with pytest.raises(StoreError):
        stage.add(doc, entry(doc), vectors_for(doc, 1)[:1])  # one vector for two chunks
    stage.add(doc, entry(doc), vectors_for(doc, 1))
    other = make_doc("w", "c")
    with pytest.raises(StoreError):
        stage.add(other, entry(other), [[0.1] * (DIM + 1)])
    with pytest.raises(StoreError):
        stage.add(other, entry(other), [[float("nan")] * DIM])
    with pytest.raises(StoreError):
        stage.publish("m", DIM + 1, {})
    stage.discard()


def test_discard_leaves_current_unchanged(gens, state):
    first = publish(gens, [make_doc("one", "first note")])
    stage = gens.stage(first.id)
    extra = make_doc("extra", "discarded words")
    stage.add(extra, entry(extra), vectors_for(extra, 3))
    stage.discard()
    stage.discard()  # idempotent
    with pytest.raises(StoreError):
        stage.add(extra, entry(extra), None)
    assert gens.current().id == first.id
    assert SqliteLexicalIndex(SqliteIndex(state)).search("discarded", ANY, 5) == []
    assert not list((state / "index" / "staging").iterdir())


def live_file(state) -> Path:
    return state / "index" / json.loads((state / "index" / "CURRENT").read_text())["file"]


def test_corrupt_current_is_reported_and_readers_survive(gens, state):
    """The full build leaves a last-good copy; an incremental publish edits the live file.
    Garbage over the live file: every reader stops serving it and serves the copy."""
    first = publish(gens, [make_doc("one", "shared words first")])
    second = publish(gens, [make_doc("two", "shared words second")], base=first.id)
    reader = SqliteIndex(state)
    lexical = SqliteLexicalIndex(reader)
    assert len(lexical.search("shared", ANY, 5)) == 2
    opened = SqliteIndex(state)  # opened the file, has read nothing from it yet
    assert SqliteGenerations(opened).current().id == second.id

    path = live_file(state)
    path.write_bytes(b"garbage" * 5000)
    # Changed behind its refresher's back: checked, failed, retired before anything reads it.
    assert [h.note.memory_id for h in SqliteLexicalIndex(opened).search("shared", ANY, 5)] == ["one"]
    assert any(path.name in p for p in opened.check_current())
    assert [h.note.memory_id for h in lexical.search("shared", ANY, 5)] == ["one"]
    assert any(path.name in p for p in reader.check_current())

    fresh = SqliteIndex(state)
    problems = fresh.check_current()
    assert any(path.name in p for p in problems)
    assert any("last good copy" in p and first.id in p for p in problems)
    assert SqliteGenerations(fresh).current().id == first.id
    assert [h.note.memory_id for h in SqliteLexicalIndex(fresh).search("shared", ANY, 5)] == ["one"]
    assert (state / "index" / "DAMAGED").is_file()  # every process learns it from the folder

    rebuilt = publish(gens, [make_doc("one", "shared words first"),
                             make_doc("two", "shared words second")])
    assert fresh.check_current() == [] and reader.check_current() == []
    assert SqliteGenerations(fresh).current().id == rebuilt.id
    assert len(lexical.search("shared", ANY, 5)) == 2
    assert not (state / "index" / "DAMAGED").exists()


def test_garbage_or_dangling_pointer_keeps_serving(gens, state):
    first = publish(gens, [make_doc("one", "stable words")])
    reader = SqliteIndex(state)
    lexical = SqliteLexicalIndex(reader)
    assert lexical.search("stable", ANY, 5)
    pointer = state / "index" / "CURRENT"
    good = pointer.read_text()
    pointer.write_text("{not json")
    assert lexical.search("stable", ANY, 5)
    assert reader.check_current()
    pointer.write_text('{"format": 2, "database": "x/../../etc/passwd", "created": ""}')
    assert lexical.search("stable", ANY, 5) and reader.check_current()
    pointer.write_text(json.dumps({**json.loads(good), "database": "20200101T000000Z-000000"}))
    assert any("missing" in p for p in SqliteIndex(state).check_current())
    assert SqliteGenerations(SqliteIndex(state)).current().id == first.id  # the copy serves


def test_collect_removes_superseded_files_and_stale_stages_after_the_grace(gens, state):
    ids = [publish(gens, [make_doc("n0", "note 0")]).id]
    for i in range(1, 4):  # in place: no file per generation
        ids.append(publish(gens, [make_doc(f"n{i}", f"note {i}")], base=ids[-1]).id)
    rebuilt = publish(gens, [make_doc("r", "rebuilt")])  # a full build: a new file
    crashed = gens.stage(None)  # a full refresh that died: its new file stays behind
    index = state / "index"
    assert gens.collect(keep=2, grace_seconds=3600) == []
    assert sorted(p.name for p in index.glob("index-*.sqlite")) == sorted(
        [f"index-{ids[0]}.sqlite", f"index-{rebuilt.id}.sqlite"])
    removed = gens.collect(keep=2, grace_seconds=0)
    assert sorted(removed) == sorted([f"index/index-{ids[0]}.sqlite",
                                      f"index/staging/{crashed.id}.sqlite"])
    assert sorted(p.name for p in index.iterdir() if p.is_file()) == sorted(
        ["CURRENT", "last-good.json", f"last-good-{rebuilt.id}.sqlite",
         f"index-{rebuilt.id}.sqlite"] + [f"index-{rebuilt.id}.sqlite{s}"
                                          for s in ("-wal", "-shm")
                                          if (index / f"index-{rebuilt.id}.sqlite{s}").exists()])
    assert gens.current().id == rebuilt.id and gens.check_current() == []
    assert gens.collect(keep=0, grace_seconds=0) == []


def test_stage_from_missing_base_is_a_store_error(gens):
    with pytest.raises(StoreError):
        gens.stage("19990101T000000Z-000000")


def test_concurrent_reads_while_publishing(gens, state):
    first = publish(gens, [make_doc("n0", "common words")])
    reader = SqliteIndex(state)
    lexical, vectors = SqliteLexicalIndex(reader), SqliteVectorIndex(reader)
    catalogue = SqliteNoteCatalogue(reader)
    failures: list[BaseException] = []
    stop = threading.Event()

    def read():
        try:
            while not stop.is_set():
                lexical.search("common words", ANY, 10)
                vectors.search(np.ones(DIM), ANY, 10)
                catalogue.notes()
        except BaseException as exc:  # recorded and asserted below
            failures.append(exc)

    threads = [threading.Thread(target=read) for _ in range(4)]
    for t in threads:
        t.start()
    base = first.id
    for i in range(1, 6):
        base = publish(gens, [make_doc(f"n{i}", "common words")], base=base).id
    stop.set()
    for t in threads:
        t.join()
    assert failures == []
    assert len(lexical.search("common", ANY, 10)) == 6


def test_pointer_records_the_live_file_as_its_refresher_left_it(gens, state):
    first = publish(gens, [make_doc("one", "x")])
    second = publish(gens, [make_doc("two", "y")], base=first.id)
    data = json.loads((state / "index" / "CURRENT").read_text())
    path = state / "index" / f"index-{first.id}.sqlite"
    assert data == {"format": 2, "database": first.id, "file": path.name,
                    "created": first.created, "size": path.stat().st_size,
                    "mtime_ns": path.stat().st_mtime_ns}
    assert not [p for p in os.listdir(state / "index") if p.endswith(".tmp")]
    assert gens.current().id == second.id


def test_the_chunking_a_generation_was_built_with_is_recorded(gens, state):
    stage = gens.stage(None)
    doc = make_doc("one", "text")
    stage.add(doc, entry(doc), vectors_for(doc, 0))
    info = stage.publish("test-model", DIM, {"ok": True}, "markdown-v2 window=8 overlap=2")
    assert info.chunking == "markdown-v2 window=8 overlap=2"
    assert SqliteGenerations(SqliteIndex(state)).current().chunking == info.chunking
    assert publish(gens, [make_doc("two", "more")], base=info.id).chunking is None


def test_a_file_changed_behind_its_refreshers_back_is_checked_before_it_is_served(gens, state):
    """CURRENT records the size and mtime of the live file after its refresher's last
    checkpoint. A copy (new mtime, same pages) passes the check and is served; damage in
    the middle of the file, which the pages a query reads may not show, is caught."""
    first = publish(gens, [make_doc(f"n{i}", f"shared words note {i} " * 40) for i in range(40)])
    second = publish(gens, [make_doc("late", "shared words late")], base=first.id)
    pointer = json.loads((state / "index" / "CURRENT").read_text())
    path = live_file(state)
    assert (pointer["size"], pointer["mtime_ns"]) == (path.stat().st_size, path.stat().st_mtime_ns)

    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10**9))  # a copy
    copied = SqliteIndex(state)
    assert SqliteGenerations(copied).current().id == second.id
    assert copied.check_current() == []

    data = bytearray(path.read_bytes())
    data[len(data) // 4: len(data) * 3 // 4] = bytes(len(data) // 2)  # zeroed middle pages
    path.write_bytes(bytes(data))
    fresh = SqliteIndex(state)
    assert SqliteGenerations(fresh).current().id == first.id  # the last-good copy
    assert any(path.name in p for p in fresh.check_current())


def test_readers_in_many_threads_survive_full_rebuilds(gens, state):
    """A full rebuild switches CURRENT to a new file and the reader closes the old one
    while other threads may be about to read it: they look again, never fail."""
    publish(gens, [make_doc("n0", "common words")])
    reader = SqliteIndex(state)
    lexical = SqliteLexicalIndex(reader)
    failures: list[BaseException] = []
    stop = threading.Event()

    def read():
        try:
            while not stop.is_set():
                assert lexical.search("common words", ANY, 10)
                SqliteGenerations(reader).current()
        except BaseException as exc:  # recorded and asserted below
            failures.append(exc)

    threads = [threading.Thread(target=read) for _ in range(4)]
    for t in threads:
        t.start()
    for i in range(1, 8):
        publish(gens, [make_doc(f"n{j}", "common words") for j in range(i + 1)])
    stop.set()
    for t in threads:
        t.join()
    assert failures == []
    assert len(lexical.search("common", ANY, 10)) == 8
