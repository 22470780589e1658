"""The index under churn: one database edited in place, a bounded folder whatever the number
of refreshes, a refresh that writes what it changed, and readers that keep one generation
per operation while refreshes commit."""

from __future__ import annotations

import os
import threading

import numpy as np
from test_sqlite_generations import ANY, DIM, entry, make_doc, vectors_for

from memory.adapters.sqlite import (SqliteGenerations, SqliteIndex, SqliteLexicalIndex,
                                    SqliteNoteCatalogue, SqliteVectorIndex)
from memory.adapters.sqlite.connection import JOURNAL_SIZE_LIMIT, open_writer
from memory.adapters.sqlite.vector_matrix import VectorMatrix

REFRESHES = int(os.environ.get("AI_MEMORY_CHURN_REFRESHES", "150"))  # scripts/stress.py: 1000
PINNED = REFRESHES // 3  # refreshes committed while one reader holds its snapshot
PAGES_PER_ONE_NOTE_COMMIT = 64


def docs_of(count: int, words: int = 60) -> list:
    return [make_doc(f"n{i}", f"note {i} " + " ".join(f"w{(i * 7 + j) % 997}"
                                                       for j in range(words)),
                     f"second part of {i}") for i in range(count)]


def edit_one(gens: SqliteGenerations, base: str, docs: list, round_no: int):
    """A one-note refresh: the note at round_no is rewritten with a fresh token."""
    i = round_no % len(docs)
    doc = make_doc(f"n{i}", f"note {i} edited in round {round_no} zq{round_no}x",
                   f"second part of {i}")
    stage = gens.stage(base)
    stage.remove([doc.note.path])
    stage.add(doc, entry(doc), vectors_for(doc, round_no))
    facts = stage.facts()
    assert facts.integrity == "ok" and facts.vectors == facts.chunks
    return stage.publish("test-model", DIM, {"ok": True})


def folder(state) -> dict[str, int]:
    return {p.name: p.stat().st_size for p in (state / "index").iterdir() if p.is_file()}


def build(gens: SqliteGenerations, docs: list):
    stage = gens.stage(None)
    for i, doc in enumerate(docs):
        stage.add(doc, entry(doc), vectors_for(doc, i))
    return stage.publish("test-model", DIM, {"ok": True})


def test_many_refreshes_leave_one_database_and_a_bounded_folder(tmp_path):
    """A reader searches throughout and pins one snapshot across a run of refreshes: the
    WAL may hold what that reader needs, and the folder still holds one database, its
    last-good copy and a WAL cut back once the reader is done: a bound by structure, not
    by how fast refreshes come."""
    state = tmp_path / ".ai-memory"
    gens = SqliteGenerations(SqliteIndex(state))
    docs = docs_of(40)
    base = build(gens, docs).id
    one_state = sum(folder(state).values()) // 2  # the live file and its copy
    live = next(p for p in (state / "index").glob("index-*.sqlite"))
    inode = live.stat().st_ino

    reader = SqliteIndex(state)
    lexical, vectors = SqliteLexicalIndex(reader), SqliteVectorIndex(reader)
    pinned, release, stop = threading.Event(), threading.Event(), threading.Event()
    seen: dict[str, set] = {"pinned": set(), "failures": set()}

    def read() -> None:
        try:
            with reader.steady():  # one snapshot across many refreshes
                for _ in range(3):
                    seen["pinned"].add(SqliteGenerations(reader).current().id)
                    lexical.search("note edited", ANY, 5)
                    pinned.set()
                release.wait()
                seen["pinned"].add(SqliteGenerations(reader).current().id)
            while not stop.is_set():
                lexical.search("note edited", ANY, 5)
                vectors.search(np.ones(DIM), ANY, 5)
        except BaseException as exc:  # recorded, asserted below
            seen["failures"].add(repr(exc))

    thread = threading.Thread(target=read)
    thread.start()
    pinned.wait(30)
    names: set[str] = set()
    pinned_wal = peak = 0
    for round_no in range(REFRESHES):
        base = edit_one(gens, base, docs, round_no).id
        files = folder(state)
        names |= set(files)
        if round_no == PINNED:
            pinned_wal = files[f"{live.name}-wal"]
            release.set()
        peak = max(peak, sum(files.values()))
    stop.set()
    thread.join()
    base = edit_one(gens, base, docs, REFRESHES).id  # after the reader: the WAL restarts

    assert seen["failures"] == set()
    assert len(seen["pinned"]) == 1  # the pinned reader saw one generation throughout
    files = folder(state)
    assert live.stat().st_ino == inode  # edited in place, never copied
    expected = ["CURRENT", "last-good.json", live.name, f"{live.name}-wal", f"{live.name}-shm",
                next(n for n in files if n.startswith("last-good-"))]
    assert sorted(names) == sorted(files) == sorted(expected)  # no file per generation, ever
    # While pinned, the WAL keeps what the reader needs: the pages of each commit since.
    assert pinned_wal <= (PINNED + 1) * PAGES_PER_ONE_NOTE_COMMIT * 4096
    assert files[f"{live.name}-wal"] <= JOURNAL_SIZE_LIMIT  # cut back once it was released
    assert files[live.name] <= 2 * one_state  # freed pages are reused, not appended
    assert SqliteGenerations(SqliteIndex(state)).current().id == base
    print(f"\n[disk-under-churn] {REFRESHES} one-note refreshes ({PINNED} behind one pinned "
          f"snapshot): files {len(names)} at most, one state {one_state // 1024} KiB, "
          f"folder {peak // 1024} KiB at most, {sum(files.values()) // 1024} KiB after")


def frames_per_commit(state, count: int, rounds: int = 6) -> int:
    """Median WAL frames (pages) one one-note commit writes. A reader holds a snapshot from
    before the first commit, so the WAL keeps every frame written since."""
    gens = SqliteGenerations(SqliteIndex(state))
    docs = docs_of(count)
    base = build(gens, docs).id
    reader = SqliteIndex(state)
    path = next((state / "index").glob("index-*.sqlite"))
    written, before = [], 0
    with reader.steady():
        SqliteNoteCatalogue(reader).notes(ANY)  # the read that opens the snapshot
        for round_no in range(rounds):
            base = edit_one(gens, base, docs, round_no).id
            conn = open_writer(path)
            try:
                frames = conn.wal_checkpoint()[0]
            finally:
                conn.close()
            written.append(frames - before)
            before = frames
    return sorted(written)[len(written) // 2]


def test_a_one_note_refresh_writes_pages_of_the_change_not_of_the_corpus(tmp_path):
    """The pages one commit writes do not grow with the corpus (16x more notes here)."""
    small, large = (frames_per_commit(tmp_path / f"state-{n}", n) for n in (50, 800))
    assert 0 < small <= PAGES_PER_ONE_NOTE_COMMIT
    assert large <= 2 * small + 8, (small, large)


def test_readers_patch_their_vectors_to_what_a_fresh_load_gives(tmp_path):
    state = tmp_path / ".ai-memory"
    gens = SqliteGenerations(SqliteIndex(state))
    docs = docs_of(30)
    base = build(gens, docs).id
    reader = SqliteIndex(state)
    vectors = SqliteVectorIndex(reader, wait_for_matrix=True)
    query = vectors_for(docs[3], 3)[0]
    assert vectors.search(query, ANY, 3)[0].chunk.chunk_id == "n3#0"
    for round_no in range(40):  # rows appended, rows dead, compacted on the way
        base = edit_one(gens, base, docs, round_no).id
        vectors.search(query, ANY, 3)

    def fresh_and_kept(view):
        return VectorMatrix.load(view.conn, view.seq), view.matrix()
    fresh, kept = reader.read(fresh_and_kept, None)
    assert kept is not None and kept.seq == fresh.seq
    live = kept.alive if kept.alive is not None else np.ones(len(kept.rowids), bool)
    assert np.array_equal(kept.rowids[live], fresh.rowids)
    assert np.allclose(kept.matrix[live], fresh.matrix)
    for probe in (vectors_for(make_doc("n5", "x"), 77)[0], np.ones(DIM)):
        assert kept.nearest(probe, None, 10) == fresh.nearest(probe, None, 10)


def test_the_manifest_of_an_earlier_generation_comes_back_from_the_log(tmp_path):
    state = tmp_path / ".ai-memory"
    gens = SqliteGenerations(SqliteIndex(state))
    docs = docs_of(5)
    ids = [build(gens, docs).id]
    manifests = [dict(gens.current().manifest)]
    for round_no in range(4):
        ids.append(edit_one(gens, ids[-1], docs, round_no).id)
        manifests.append(dict(gens.current().manifest))
    stage = gens.stage(ids[-1])
    stage.remove([docs[4].note.path])
    ids.append(stage.publish("test-model", DIM, {}).id)
    manifests.append(dict(gens.current().manifest))
    assert docs[4].note.path not in manifests[-1]
    other = SqliteGenerations(SqliteIndex(state))  # another process
    for gen_id, manifest in reversed(list(zip(ids, manifests))):
        assert dict(other.manifest_of(gen_id)) == manifest, gen_id
    assert other.manifest_of("19990101T000000Z-000000") is None
    assert os.path.exists(state / "index" / "CURRENT")


def test_a_serving_process_keeps_its_vectors_current_through_its_own_refreshes(tmp_path):
    """The refresher advances the matrix it holds by what it changed: the next refresh's
    self-check and the next search use it, and it equals what a fresh load gives."""
    state = tmp_path / ".ai-memory"
    index = SqliteIndex(state)
    gens = SqliteGenerations(index)
    docs = docs_of(30)
    base = build(gens, docs).id
    SqliteVectorIndex(index, wait_for_matrix=True).search(np.ones(DIM), ANY, 1)
    for round_no in range(12):
        base = edit_one(gens, base, docs, round_no).id
        seq = index.read(lambda view: view.seq, None)
        kept = index.serving().vectors.kept(seq)  # there before any read patched it
        assert kept is not None and kept.seq == seq
    fresh = index.read(lambda view: VectorMatrix.load(view.conn, view.seq), None)
    live = kept.alive if kept.alive is not None else np.ones(len(kept.rowids), bool)
    assert np.array_equal(kept.rowids[live], fresh.rowids)
    assert np.allclose(kept.matrix[live], fresh.matrix)
