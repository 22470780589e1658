"""benchmarks/locomo_to_chat_jsonl.py: a LoCoMo session note becomes plain-format records
in dia_id order that the artifact store ingests whole."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from memory.adapters.artifacts.chat_jsonl import ChatJsonlReader
from memory.adapters.artifacts.sqlite_store import SqliteArtifactStore
from memory.application.artifacts.intake import ArtifactIntake

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "locomo_to_chat_jsonl.py"
SESSION = """---
title: "Ana and Bo - session {n}"
date: "2023-05-0{n}T13:56"
participants: ["Ana", "Bo"]
---

# Session {n}: Ana and Bo

- [D{n}:1] **Ana**: Hi Bo! (shared a photo: a dog on a beach)
- [D{n}:2] **Bo**: Hey Ana: long time.
"""


def converter():
    spec = importlib.util.spec_from_file_location("locomo_to_chat_jsonl", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_sessions_become_records_in_dia_id_order_and_ingest_whole(tmp_path):
    sessions = tmp_path / "memory" / "projects" / "locomo-9" / "sessions"
    sessions.mkdir(parents=True)
    for n in (2, 1):  # written out of order: the files' order must not matter
        (sessions / f"session-0{n}.md").write_text(SESSION.format(n=n))
    out = tmp_path / "chat"
    assert converter().convert(tmp_path / "memory", out) == {"locomo-9": 4}
    reader = ChatJsonlReader()
    read = reader.read(str(out / "locomo-9.jsonl"))
    fields = [r.fields for r in read.records]
    assert [(f["seq"], f["speaker"], f["session"]) for f in fields] == [
        (1001, "Ana", "session-01"), (1002, "Bo", "session-01"),
        (2001, "Ana", "session-02"), (2002, "Bo", "session-02")]
    assert fields[1]["text"] == "Hey Ana: long time." and fields[2]["time"] == \
        "2023-05-02T13:56:00+00:00" and fields[0]["project"] == "locomo-9"
    summary = ArtifactIntake(reader, SqliteArtifactStore(tmp_path / "state")).ingest(
        "locomo", [str(out)])
    assert (summary.conversations, summary.records, summary.refused) == (1, 4, 0)
