"""The artifact store on real SQLite and real files: a batch is stored whole or not at all,
ingesting again changes nothing, a grown file is read from where it ended, a rewritten one
becomes a revision; check, backup and restore verify every record's digest."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import stat
from pathlib import Path

import pytest

from memory.adapters.artifacts.chat_jsonl import ChatJsonlReader, lines_of
from memory.adapters.artifacts.sqlite_store import SqliteArtifactStore, artifacts_path
from memory.application.artifacts.intake import ArtifactIntake
from memory.domain.errors import InvalidRequest, NotFound


def turn(seq: int, text: str | None = None, conversation: str = "c-42", **more) -> dict:
    return {"conversation": conversation, "session": "s1", "seq": seq,
            "time": f"2023-05-08T13:{seq % 60:02d}:00+00:00", "speaker": "Caroline",
            "role": "user", "project": "apollo", "text": text or f"turn {seq} of the chat",
            **more}


@pytest.fixture
def state(tmp_path) -> Path:
    return tmp_path / "state"


@pytest.fixture
def intake(state) -> ArtifactIntake:
    return ArtifactIntake(ChatJsonlReader(), SqliteArtifactStore(state))


def rows(state: Path, sql: str) -> list[tuple]:
    conn = sqlite3.connect(artifacts_path(state))
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def write(path: Path, *records: dict) -> Path:
    path.write_text(lines_of(records), encoding="utf-8")
    return path


def test_ingesting_a_file_stores_its_conversation_and_messages_in_order(tmp_path, state, intake):
    chat = write(tmp_path / "chat.jsonl", turn(1), turn(2), turn(1, conversation="c-43"))
    summary = intake.ingest("team", [str(chat)])
    assert (summary.conversations, summary.records, summary.skipped, summary.refused) == \
        (2, 3, 0, 0)
    assert rows(state, "SELECT conversation, project FROM conversations ORDER BY 1") == \
        [("c-42", "apollo"), ("c-43", "apollo")]
    assert rows(state, "SELECT conversation, seq, speaker, text FROM messages "
                       "WHERE current = 1 ORDER BY 1, 2")[:2] == \
        [("c-42", 1, "Caroline", "turn 1 of the chat"), ("c-42", 2, "Caroline", "turn 2 of the chat")]


def test_ingesting_the_same_file_again_changes_nothing(tmp_path, state, intake):
    chat = write(tmp_path / "chat.jsonl", turn(1), turn(2))
    intake.ingest("team", [str(chat)])
    before = artifacts_path(state).read_bytes()
    again = intake.ingest("team", [str(tmp_path)])  # the folder: the same file
    assert (again.records, again.refused) == (0, 0)
    assert artifacts_path(state).read_bytes() == before
    assert rows(state, "SELECT COUNT(*) FROM messages") == [(2,)]


def test_a_grown_file_is_read_from_where_the_last_batch_ended(tmp_path, state, intake):
    chat = write(tmp_path / "chat.jsonl", turn(1), turn(2))
    intake.ingest("team", [str(chat)])
    with open(chat, "a", encoding="utf-8") as handle:
        handle.write(lines_of([turn(3)]) + "\n")  # a blank line counts as a line
        handle.write(lines_of([{"conversation": "c-42", "text": "no seq"}]))
    refused = intake.ingest("team", [str(chat)])
    assert refused.refused == 1 and f"{chat}:5: missing `seq`" in refused.files[0].refused
    assert rows(state, "SELECT COUNT(*) FROM messages") == [(2,)]  # the batch, refused whole
    write(chat, turn(1), turn(2), turn(3), turn(4))
    grown = intake.ingest("team", [str(chat)])
    assert (grown.records, grown.skipped, grown.files[0].rewritten) == (2, 0, False)
    assert rows(state, "SELECT seq FROM messages ORDER BY seq") == [(1,), (2,), (3,), (4,)]


def test_a_rewritten_file_is_said_so_and_its_changes_are_revisions_not_duplicates(
        tmp_path, state, intake):
    chat = write(tmp_path / "chat.jsonl", turn(1), turn(2))
    intake.ingest("team", [str(chat)])
    write(chat, turn(1, "turn 1, corrected"), turn(2))
    summary = intake.ingest("team", [str(chat)])
    assert summary.files[0].rewritten and (summary.records, summary.skipped) == (1, 1)
    assert any("was rewritten" in w for w in summary.warnings)
    assert rows(state, "SELECT seq, revision, current, text FROM messages ORDER BY 1, 2") == [
        (1, 0, 0, "turn 1 of the chat"), (1, 1, 1, "turn 1, corrected"),
        (2, 0, 1, "turn 2 of the chat")]
    assert SqliteArtifactStore(state).check().ok


def test_another_file_contradicting_a_stored_message_is_refused_whole(tmp_path, state, intake):
    intake.ingest("team", [str(write(tmp_path / "a.jsonl", turn(1)))])
    other = write(tmp_path / "b.jsonl", turn(5), turn(1, "something else"))
    summary = intake.ingest("team", [str(other)])
    assert summary.refused == 1 and f"{other}:2" in summary.files[0].refused
    assert rows(state, "SELECT seq FROM messages") == [(1,)]  # turn 5 was not stored either
    assert rows(state, "SELECT path FROM files") == [(str((tmp_path / "a.jsonl").resolve()),)]


def test_malformed_json_refuses_the_file_naming_its_line_and_stores_nothing(
        tmp_path, state, intake):
    chat = tmp_path / "chat.jsonl"
    chat.write_text(lines_of([turn(1)]) + '{"conversation": "c-42", "seq": 2,\n'
                    + lines_of([turn(3)]))
    summary = intake.ingest("team", [str(chat)])
    assert summary.refused == 1 and f"{chat}:2: not valid JSON" in summary.files[0].refused
    assert rows(state, "SELECT COUNT(*) FROM messages") == [(0,)]


def test_a_last_line_still_being_written_is_left_for_the_next_ingest(tmp_path, state, intake):
    chat = tmp_path / "chat.jsonl"
    chat.write_text(lines_of([turn(1)]) + '{"conversation": "c-42", "se')
    first = intake.ingest("team", [str(chat)])
    assert first.records == 1 and first.files[0].note and ":2:" in first.files[0].note
    chat.write_text(lines_of([turn(1), turn(2)]))
    second = intake.ingest("team", [str(chat)])
    assert (second.records, second.files[0].rewritten) == (1, False)


def test_a_missing_path_is_not_found(tmp_path, intake):
    with pytest.raises(NotFound):
        intake.ingest("team", [str(tmp_path / "nowhere.jsonl")])


def test_the_database_is_owner_only_and_in_wal_mode(tmp_path, state, intake):
    old = os.umask(0o022)  # a usual umask, under which files are world-readable
    try:
        intake.ingest("team", [str(write(tmp_path / "chat.jsonl", turn(1)))])
    finally:
        os.umask(old)
    path = artifacts_path(state)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert rows(state, "PRAGMA journal_mode") == [("wal",)]


def tamper(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("UPDATE messages SET text = 'forged' WHERE seq = 2")
    conn.commit()
    conn.close()


def test_check_finds_a_record_that_no_longer_matches_its_digest(tmp_path, state, intake):
    intake.ingest("team", [str(write(tmp_path / "chat.jsonl", turn(1), turn(2)))])
    store = SqliteArtifactStore(state)
    assert store.check().ok and store.check().records == 2
    tamper(artifacts_path(state))
    report = store.check()
    assert not report.ok and "team/c-42#2" in report.problems[0]


def test_backup_then_restore_brings_back_what_was_stored(tmp_path, state, intake):
    intake.ingest("team", [str(write(tmp_path / "chat.jsonl", turn(1), turn(2)))])
    store = SqliteArtifactStore(state)
    copy = tmp_path / "copy.sqlite"
    digest = store.backup(str(copy))
    assert Path(f"{copy}.sha256").read_text().split() == [digest, "copy.sqlite"]
    assert stat.S_IMODE(copy.stat().st_mode) == 0o600
    tamper(artifacts_path(state))
    assert not store.check().ok
    restored = store.restore(str(copy))
    assert restored.ok and restored.records == 2
    assert rows(state, "SELECT text FROM messages WHERE seq = 2") == [("turn 2 of the chat",)]
    with pytest.raises(InvalidRequest, match="exists"):
        store.backup(str(copy))


def test_restore_refuses_a_copy_that_changed_or_fails_its_check(tmp_path, state, intake):
    intake.ingest("team", [str(write(tmp_path / "chat.jsonl", turn(1), turn(2)))])
    store = SqliteArtifactStore(state)
    copy = tmp_path / "copy.sqlite"
    store.backup(str(copy))
    tamper(copy)
    before = rows(state, "SELECT text FROM messages ORDER BY seq")
    with pytest.raises(InvalidRequest, match="does not match its digest"):
        store.restore(str(copy))
    # A forger who rewrites the digest too is stopped by the records' own digests.
    digest = hashlib.sha256(copy.read_bytes()).hexdigest()
    Path(f"{copy}.sha256").write_text(f"{digest}  copy.sqlite\n")
    with pytest.raises(InvalidRequest, match="fails its check"):
        store.restore(str(copy))
    Path(f"{copy}.sha256").unlink()
    with pytest.raises(InvalidRequest, match="no copy.sqlite.sha256"):
        store.restore(str(copy))
    assert rows(state, "SELECT text FROM messages ORDER BY seq") == before



@pytest.mark.parametrize("content", [b"not a database at all " * 100, "empty sqlite"])
def test_restore_refuses_a_file_that_is_no_artifact_store(tmp_path, state, intake, content):
    intake.ingest("team", [str(write(tmp_path / "chat.jsonl", turn(1)))])
    other = tmp_path / "other.sqlite"
    if isinstance(content, bytes):
        other.write_bytes(content)
    else:
        sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.close()
    Path(f"{other}.sha256").write_text(f"{hashlib.sha256(other.read_bytes()).hexdigest()}  x\n")
    with pytest.raises(InvalidRequest, match="fails its check, nothing restored"):
        SqliteArtifactStore(state).restore(str(other))
    assert SqliteArtifactStore(state).check().records == 1


def test_a_line_too_long_to_be_a_message_refuses_the_file_without_reading_it_whole(
        tmp_path, state, intake, monkeypatch):
    from memory.adapters.artifacts import chat_jsonl
    monkeypatch.setattr(chat_jsonl, "MAX_LINE", 1 << 20)
    chat = tmp_path / "chat.jsonl"
    chat.write_text(lines_of([turn(1), turn(2, "x" * (2 << 20))]))
    summary = intake.ingest("team", [str(chat)])
    assert summary.refused == 1 and f"{chat}:2: a line over 1 MiB" in summary.files[0].refused
    assert rows(state, "SELECT COUNT(*) FROM messages") == [(0,)]
