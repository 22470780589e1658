"""Several processes ingest the same transcripts while they grow: every record is stored
once, no batch is refused, no file's extent moves back, and the store passes its check."""

from __future__ import annotations

import json
import multiprocessing
import os
import sqlite3
import sys
import time
from pathlib import Path

from memory.adapters.artifacts.chat_jsonl import ChatJsonlReader
from memory.adapters.artifacts.sqlite_store import SqliteArtifactStore, artifacts_path
from memory.application.artifacts.intake import ArtifactIntake

FILES = 3
TURNS = int(os.environ.get("AI_MEMORY_ARTIFACT_TURNS", "60"))  # per file
INGESTERS = int(os.environ.get("AI_MEMORY_ARTIFACT_PROCESSES", "3"))


def ingest_until_done(state: str, folder: str, done, refused, passes) -> None:
    intake = ArtifactIntake(ChatJsonlReader(), SqliteArtifactStore(state))
    with passes.get_lock():
        passes.value += 1
    while True:
        finished = done.is_set()  # read before the ingest: one more pass after the last write
        summary = intake.ingest("team", [folder])
        for warning in summary.warnings:
            print(warning, file=sys.stderr)
        with refused.get_lock(), passes.get_lock():
            refused.value += summary.refused
            passes.value += 1
        if finished:
            return


def grow(folder: Path) -> None:
    for seq in range(TURNS):
        time.sleep(0.01)  # the ingesters get to read the files between turns
        for n in range(FILES):
            record = {"conversation": f"c-{n}", "seq": seq, "speaker": "Ana",
                      "text": f"turn {seq} of conversation {n}"}
            line = json.dumps(record) + "\n"
            with open(folder / f"chat-{n}.jsonl", "a", encoding="utf-8") as handle:
                handle.write(line[: len(line) // 2])  # a line seen half written, at times
                handle.flush()
                handle.write(line[len(line) // 2:])


def test_many_ingesters_on_growing_files_store_each_record_once(tmp_path):
    folder, state = tmp_path / "chats", tmp_path / "state"
    folder.mkdir()
    for n in range(FILES):
        (folder / f"chat-{n}.jsonl").write_text("")
    context = multiprocessing.get_context("spawn")
    done, refused, passes = context.Event(), context.Value("i", 0), context.Value("i", 0)
    workers = [context.Process(target=ingest_until_done, args=(str(state), str(folder), done,
                                                                refused, passes))
               for _ in range(INGESTERS)]
    for worker in workers:
        worker.start()
    try:
        while passes.value < INGESTERS and all(w.is_alive() for w in workers):
            time.sleep(0.05)  # every ingester is running before the files grow
        started_passes = passes.value
        grow(folder)
    finally:
        done.set()
        for worker in workers:
            worker.join(timeout=300)
    assert [w.exitcode for w in workers] == [0] * INGESTERS
    assert refused.value == 0
    assert passes.value - started_passes > INGESTERS  # they did ingest while the files grew
    conn = sqlite3.connect(artifacts_path(state))
    rows = conn.execute("SELECT conversation, seq, revision FROM messages").fetchall()
    extents = conn.execute("SELECT path, size FROM files ORDER BY path").fetchall()
    conn.close()
    assert len(rows) == FILES * TURNS and {r[2] for r in rows} == {0}
    assert extents == [(str((folder / f"chat-{n}.jsonl").resolve()),
                        (folder / f"chat-{n}.jsonl").stat().st_size) for n in range(FILES)]
    assert SqliteArtifactStore(state).check().ok
