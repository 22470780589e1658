"""ArtifactStore: what every store of raw records does, the dict-backed fake and SQLite alike,
so that the fake the intake tests use cannot drift from the real store."""

from __future__ import annotations

import pytest

from memory.adapters.artifacts.sqlite_store import SqliteArtifactStore
from memory.adapters.inmemory.artifacts import InMemoryArtifactStore
from memory.domain.artifacts import (BatchRefused, IngestedFile, IngestRaced, RawRecord,
                                     validate_batch)
from memory.ports.artifact_store import ArtifactStore


@pytest.fixture(params=["in-memory", "sqlite"])
def store(request, tmp_path) -> ArtifactStore:
    return InMemoryArtifactStore() if request.param == "in-memory" \
        else SqliteArtifactStore(tmp_path / "state")


def batch(*turns: tuple[int, str], project: str | None = "apollo"):
    return validate_batch("team", [
        RawRecord(where=f"f.jsonl:{n}", fields={"conversation": "c-1", "seq": seq, "text": text,
                                                "project": project})
        for n, (seq, text) in enumerate(turns, 1)])


def extent(size: int, revision: int = 0) -> IngestedFile:
    return IngestedFile(source="team", path="/chats/f.jsonl", size=size, lines=size,
                        digest=f"{size:064x}", revision=revision)


def test_a_store_conforms_and_knows_nothing_at_first(store):
    assert isinstance(store, ArtifactStore)
    assert store.ingested("team", "/chats/f.jsonl") is None
    assert (store.check().records, store.check().ok) == (0, True)


def test_stored_batches_count_new_unchanged_and_revised_records(store):
    first = store.store(batch((1, "a"), (2, "b")), extent(2), revising=False, read_from=None)
    assert (first.new, first.unchanged, first.revised) == (2, 0, 0)
    assert store.ingested("team", "/chats/f.jsonl") == extent(2)
    again = store.store(batch((1, "a"), (2, "b"), (3, "c")), extent(3), revising=False,
                        read_from=extent(2))
    assert (again.new, again.unchanged, again.revised) == (1, 2, 0)
    revised = store.store(batch((1, "A"), (2, "b")), extent(2, revision=1), revising=True,
                          read_from=extent(3))
    assert (revised.new, revised.unchanged, revised.revised) == (0, 1, 1)
    report = store.check()
    assert report.ok and (report.conversations, report.records) == (1, 4)  # 3 + a revision


def test_other_content_under_a_stored_key_refuses_the_batch_and_stores_none_of_it(store):
    store.store(batch((1, "a")), extent(1), revising=False, read_from=None)
    with pytest.raises(BatchRefused) as refused:
        store.store(batch((5, "new"), (1, "changed")), extent(2), revising=False,
                    read_from=extent(1))
    assert refused.value.where == "f.jsonl:2"
    with pytest.raises(BatchRefused):
        store.store(batch((6, "new"), project="hermes"), extent(2), revising=False,
                    read_from=extent(1))
    assert store.check().records == 1 and store.ingested("team", "/chats/f.jsonl") == extent(1)


def test_a_backup_restores_what_was_stored_when_it_was_made(store, tmp_path):
    store.store(batch((1, "a")), extent(1), revising=False, read_from=None)
    copy = str(tmp_path / "copy.sqlite")
    assert len(store.backup(copy)) == 64
    store.store(batch((1, "a"), (2, "b")), extent(2), revising=False, read_from=extent(1))
    assert store.restore(copy).records == 1
    assert store.ingested("team", "/chats/f.jsonl") == extent(1)


def test_a_batch_read_after_an_extent_no_longer_stored_is_refused_as_a_race(store):
    store.store(batch((1, "a")), extent(1), revising=False, read_from=None)
    with pytest.raises(IngestRaced):  # read when nothing was stored: another ingest won
        store.store(batch((1, "a"), (2, "b")), extent(2), revising=False, read_from=None)
    assert store.check().records == 1 and store.ingested("team", "/chats/f.jsonl") == extent(1)
