"""Intake over fakes: each file read from where its last batch ended, a refused file stores
nothing and the others go on, a rewritten file becomes revisions, progress names each file."""

from __future__ import annotations

import pytest

from memory.adapters.inmemory.artifacts import (MALFORMED, InMemoryArtifactReader,
                                                InMemoryArtifactStore)
from memory.application.artifacts.intake import ArtifactIntake
from memory.domain.errors import NotFound


def turn(seq: int, text: str = "", conversation: str = "c-1") -> dict:
    return {"conversation": conversation, "seq": seq, "text": text or f"turn {seq}"}


@pytest.fixture
def files() -> dict:
    return {"chats/a.jsonl": [turn(1), turn(2)], "chats/b.jsonl": [turn(1, conversation="c-2")]}


@pytest.fixture
def store() -> InMemoryArtifactStore:
    return InMemoryArtifactStore()


@pytest.fixture
def intake(files, store) -> ArtifactIntake:
    return ArtifactIntake(InMemoryArtifactReader(files), store)


def test_a_folder_ingests_each_file_and_progress_names_them(intake):
    seen = []
    summary = intake.ingest("team", ["chats"], lambda n, total, path: seen.append((n, total, path)))
    assert seen == [(1, 2, "chats/a.jsonl"), (2, 2, "chats/b.jsonl")]
    assert (summary.conversations, summary.records, summary.skipped, summary.refused) == \
        (2, 3, 0, 0)


def test_the_same_files_again_store_nothing(intake, store):
    intake.ingest("team", ["chats"])
    stores = store.stores
    again = intake.ingest("team", ["chats"])
    assert (again.records, again.conversations, store.stores) == (0, 0, stores)


def test_a_grown_file_sends_only_its_new_records(intake, files, store):
    intake.ingest("team", ["chats/a.jsonl"])
    files["chats/a.jsonl"].append(turn(3))
    grown = intake.ingest("team", ["chats/a.jsonl"])
    assert (grown.records, grown.skipped, grown.files[0].rewritten) == (1, 0, False)
    assert store.ingested("team", "chats/a.jsonl").size == 3


def test_a_rewritten_file_is_read_whole_and_changes_become_revisions(intake, files, store):
    intake.ingest("team", ["chats/a.jsonl"])
    files["chats/a.jsonl"] = [turn(1, "corrected"), turn(2)]
    summary = intake.ingest("team", ["chats/a.jsonl"])
    assert summary.files[0].rewritten and (summary.records, summary.skipped) == (1, 1)
    assert [m.text for m in store.messages[("team", "c-1", 1)]] == ["turn 1", "corrected"]
    assert store.ingested("team", "chats/a.jsonl").revision == 1
    assert "rewritten" in summary.warnings[0]


def test_a_refused_file_stores_nothing_and_the_next_file_is_still_ingested(intake, files, store):
    files["chats/a.jsonl"] = [turn(1), MALFORMED, turn(3)]
    summary = intake.ingest("team", ["chats"])
    assert summary.refused == 1 and "chats/a.jsonl:2: not valid JSON" in summary.files[0].refused
    assert ("team", "c-1", 1) not in store.messages and store.ingested("team", "chats/a.jsonl") is None
    assert summary.records == 1 and ("team", "c-2", 1) in store.messages


def test_a_file_contradicting_a_stored_message_is_refused_whole(intake, files, store):
    intake.ingest("team", ["chats/a.jsonl"])
    files["chats/c.jsonl"] = [turn(9), turn(2, "other words")]
    summary = intake.ingest("team", ["chats/c.jsonl"])
    assert summary.refused == 1 and "chats/c.jsonl:2" in summary.files[0].refused
    assert ("team", "c-1", 9) not in store.messages


def test_a_missing_path_is_not_found(intake):
    with pytest.raises(NotFound):
        intake.ingest("team", ["elsewhere"])


class RacedStore(InMemoryArtifactStore):
    """Between this ingest's read and its store, each file grows by one record and another
    ingest stores it all."""

    def __init__(self, files: dict):
        super().__init__()
        self.files_on_disk = files
        self.other = ArtifactIntake(InMemoryArtifactReader(files), self)
        self.raced: set[str] = set()

    def store(self, batch, file, revising, read_from):
        if file.path not in self.raced:
            self.raced.add(file.path)
            self.files_on_disk[file.path].append(turn(99, conversation=file.path))
            self.other.ingest("team", [file.path])
        return super().store(batch, file, revising, read_from)


def test_an_ingest_that_lost_a_race_reads_on_from_the_winner_and_undoes_nothing(files):
    store = RacedStore(files)
    summary = ArtifactIntake(InMemoryArtifactReader(files), store).ingest("team", ["chats"])
    assert summary.refused == 0 and summary.records == 0  # the other ingest stored them all
    # Each file's extent is the winner's (grown), not the older one this ingest had read.
    assert [store.ingested("team", p).size for p in sorted(files)] == [3, 2]
    assert store.check().records == 5
