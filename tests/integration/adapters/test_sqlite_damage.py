"""Damage the index file's metadata does not show: bytes flipped with its size and mtime
kept. Every read either answers with exactly what was written or fails with StoreError
(and the file is retired); never another exception, never other text. Also: an old-layout
folder, and the state folder removed under a running reader."""

from __future__ import annotations

import json
import os
import random
import shutil
import time

import apsw
import pytest
from test_sqlite_generations import ANY, make_doc, publish, vectors_for

from memory.adapters.sqlite import (SqliteGenerations, SqliteIndex, SqliteLexicalIndex,
                                    SqliteNoteCatalogue, SqliteVectorIndex)
from memory.adapters.sqlite.rows import crc, opened
from memory.domain.scope import ScopeFilter
from memory.ports.errors import StoreError

DOCS = [make_doc(f"note-{i}", f"alpha bravo note {i} " + " ".join(
    f"word{(i * 13 + j) % 251}" for j in range(80)), f"closing part {i} charlie",
    path=f"Repos/r{i % 3}/n{i}.md", repository=f"r{i % 3}") for i in range(30)]
QUERIES = ["alpha bravo", "charlie closing", "word7 word99", "note 17"]


def flip(path, count: int, seed: int) -> None:
    st = path.stat()
    data = bytearray(path.read_bytes())
    rng = random.Random(seed)
    for at in rng.sample(range(len(data)), count):
        data[at] ^= rng.randrange(1, 256)
    path.write_bytes(bytes(data))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def live_file(state):
    return state / "index" / json.loads((state / "index" / "CURRENT").read_text())["file"]


class Reads:
    """Every kind of read, each judged against what was written."""

    def __init__(self, reader: SqliteIndex):
        self.lexical, self.vectors = SqliteLexicalIndex(reader), SqliteVectorIndex(reader)
        self.catalogue = SqliteNoteCatalogue(reader)
        self.notes = {d.note.memory_id: d.note for d in DOCS}
        self.docs = {d.note.memory_id: d for d in DOCS}
        self.answered = self.refused = 0

    def judge(self, read) -> None:
        try:
            read()
        except StoreError:
            self.refused += 1
            return
        self.answered += 1

    def hits_are_written(self, hits) -> None:
        for hit in hits:
            assert hit.note == self.notes[hit.note.memory_id]
            assert hit.chunk in self.docs[hit.note.memory_id].chunks

    def all(self) -> None:
        self.judge(lambda: [self.notes[n.memory_id] == n or pytest.fail(n)
                            for n in self.catalogue.notes(ANY)])
        for doc in DOCS[::5]:
            memory_id = doc.note.memory_id
            self.judge(lambda: self.catalogue.note(memory_id) in (None, doc.note) or pytest.fail())
            self.judge(lambda: list(self.catalogue.chunks_of(memory_id)) in ([], list(doc.chunks))
                       or pytest.fail(memory_id))
            self.judge(lambda: tuple(self.catalogue.lines(memory_id)) in ((), doc.lines)
                       or pytest.fail(memory_id))
        for query in QUERIES:
            for scope in (ANY, ScopeFilter(repository="r1")):
                self.judge(lambda: self.hits_are_written(self.lexical.search(query, scope, 5)))
        self.judge(lambda: self.hits_are_written(self.vectors.search(
            vectors_for(DOCS[4], 4)[0], ANY, 5)))
        self.judge(lambda: [self.notes[n.memory_id] == n or pytest.fail(n)
                            for n in self.catalogue.find("note-7")])


@pytest.mark.parametrize("count", [1, 40, 400])
@pytest.mark.parametrize("seed", range(8))
def test_flipped_bytes_with_size_and_mtime_kept_never_give_wrong_answers(tmp_path, seed, count):
    state = tmp_path / ".ai-memory"
    gens = SqliteGenerations(SqliteIndex(state))
    first = publish(gens, DOCS[:20])
    publish(gens, DOCS[20:], base=first.id)  # the live file now differs from its copy
    flip(live_file(state), count, seed)
    for wait in (False, True):  # a reader serving vectors from SQL, then from its matrix
        reader = SqliteIndex(state)
        reads = Reads(reader)
        if wait:
            reader.read(lambda view: view.matrix(wait=True), None)
        reads.all()
        problems = reader.check_current()
        if reads.refused:  # what refused a read is retired, and health says so
            assert problems, (reads.answered, reads.refused)


def test_an_old_layout_folder_is_reported_and_rebuilt_by_the_next_full_stage(gens_state):
    gens, state = gens_state
    index = state / "index"
    (index / "staging").mkdir(parents=True)
    old = index / "gen-20260101T000000Z-abcdef.sqlite"
    conn = apsw.Connection(str(old))
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    conn.execute("INSERT INTO meta VALUES ('schema_version', '1')")
    conn.close()
    (index / "CURRENT").write_text(json.dumps({"id": "20260101T000000Z-abcdef", "file": old.name,
                                               "created": "", "size": old.stat().st_size,
                                               "mtime_ns": old.stat().st_mtime_ns}))
    reader = SqliteIndex(state)
    assert SqliteGenerations(reader).current() is None
    assert SqliteLexicalIndex(reader).search("fresh", ANY, 5) == []
    assert any("older ai-memory" in p for p in reader.check_current())
    with pytest.raises(StoreError):
        gens.stage("20260101T000000Z-abcdef")
    info = publish(gens, [make_doc("one", "fresh words")])
    assert reader.check_current() == []
    assert SqliteGenerations(reader).current().id == info.id
    assert f"index/{old.name}" in gens.collect(keep=3, grace_seconds=0) and not old.exists()


def test_the_state_folder_removed_under_a_running_reader(gens_state):
    gens, state = gens_state
    publish(gens, [make_doc("one", "stable words")])
    reader = SqliteIndex(state)
    lexical, catalogue = SqliteLexicalIndex(reader), SqliteNoteCatalogue(reader)
    with reader.steady():  # a read in progress keeps the snapshot it began with
        assert lexical.search("stable", ANY, 5)
        remove_folder(state)
        assert lexical.search("stable", ANY, 5)
    assert SqliteGenerations(reader).current() is None
    assert lexical.search("stable", ANY, 5) == [] and catalogue.notes() == []
    assert any(str(state / "index") in p and "gone" in p for p in reader.check_current())
    info = publish(gens, [make_doc("two", "rebuilt words")])
    assert SqliteGenerations(reader).current().id == info.id
    assert [h.note.memory_id for h in lexical.search("rebuilt", ANY, 5)] == ["two"]
    assert reader.check_current() == []


def remove_folder(path, attempts: int = 50) -> None:
    """`rm -rf` until the folder is gone: the reader's own threads (the background
    quick_check, the vector matrix's load) may open a file in it while it is being removed,
    so one rmtree can meet "Directory not empty" (seen once under load)."""
    for _ in range(attempts):
        try:
            shutil.rmtree(path)
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.02)
            continue
        if not path.exists():
            return
    raise AssertionError(f"{path} could not be removed")


@pytest.fixture
def gens_state(tmp_path):
    state = tmp_path / ".ai-memory"
    index = SqliteIndex(state)
    yield SqliteGenerations(index), state
    index.close()


def test_a_flipped_byte_inside_a_chunks_text_is_caught_by_its_rows_check(gens_state):
    """SQLite's own check reads page structure, not what a row holds: the row's CRC does."""
    gens, state = gens_state
    first = publish(gens, DOCS[:20])
    publish(gens, DOCS[20:], base=first.id)
    path = live_file(state)
    st = path.stat()
    data = bytearray(path.read_bytes())
    needle = b"alpha bravo note 7 word"
    at = data.find(needle)
    assert at >= 0
    while at >= 0:
        data[at + 6] ^= 0x01  # "bravo" -> "cravo": still valid UTF-8, still the same length
        at = data.find(needle, at + 1)
    path.write_bytes(bytes(data))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))

    reader = SqliteIndex(state)
    reader.read(lambda view: None, None)
    reader.check_current()  # the page structure is intact: nothing found yet
    catalogue = SqliteNoteCatalogue(reader)
    doc = next(d for d in DOCS if d.note.memory_id == "note-7")
    assert list(catalogue.chunks_of("note-7")) == list(doc.chunks)  # from the last-good copy
    assert tuple(catalogue.lines("note-7")) == doc.lines
    assert any(path.name in p and "fails its check" in p for p in reader.check_current())
    other = SqliteIndex(state)  # another process learns it from index/DAMAGED
    assert any(path.name in p for p in other.check_current())


def test_row_seals_keep_the_encoding_indexes_were_written_with():
    """A row's CRC is part of the file format: index files written by earlier versions must
    still open, so the encoding of every value kind stays what it was (values as written by
    the row-by-row crc32 chain before it became one call)."""
    values = ("mem-1", None, b"\x00\x01", "Ünïcode \ud800", 42, 1.5, "")
    assert crc(values) == 2643164077
    assert crc(()) == 0 and crc(("[]",)) == 3490377426
    assert opened((*values, 2643164077), "note") == values
    with pytest.raises(StoreError, match="fails its check"):
        opened((*values[:-1], " ", 2643164077), "note")
