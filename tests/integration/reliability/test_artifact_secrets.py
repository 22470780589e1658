"""Secrets at intake of raw records: the secrets the note tests plant (disguised ones included)
and private text, sent as chat messages, never reach the artifact store's files: the database
and its WAL are read as raw bytes. The rest of each message is kept, with a marker."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from test_secret_evasions import EVASIONS

from memory.adapters.artifacts.chat_jsonl import ChatJsonlReader, lines_of
from memory.adapters.artifacts.sqlite_store import SqliteArtifactStore, artifacts_path
from memory.application.artifacts.intake import ArtifactIntake

# Beside the evasions: the plain shapes of tests/integration/reliability/test_secrets_real_stack.py,
# as they turn up in a transcript (an .env dump, a curl line, a key pasted in a sentence).
PLAIN = {
    "env-dump": ("Here is my .env:\nDB_PASSWORD=Sup3rS3cretEnv\n"
                 "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7REALLYX\nOPENAI_API_KEY=sk-" + "Zx9" * 10,
                 ["Sup3rS3cretEnv", "IOSFODNN7REALLYX", "Zx9Zx9Zx9Zx9"]),
    "bearer": ("curl -H 'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.signature99' "
               "https://deploy.internal/hook", ["eyJhbGciOiJIUzI1NiJ9", "signature99"]),
    "url": ("connect to postgres://admin:pgpass12345@db.internal/app", ["pgpass12345"]),
    "github": ("my token is ghp_" + "Ab1" * 12 + " ok", ["Ab1Ab1Ab1Ab1"]),
    "private": ("The fix works. <private>my salary is 91234 euros</private> Ship it.",
                ["91234", "salary"]),
}
PLANTED = {**{name: ("\n".join(lines), gone) for name, (lines, gone) in EVASIONS.items()},
           **PLAIN}


def store_bytes(state: Path) -> bytes:
    path = artifacts_path(state)
    return b"".join(Path(f"{path}{suffix}").read_bytes()
                    for suffix in ("", "-wal") if Path(f"{path}{suffix}").exists())


@pytest.fixture(scope="module")
def ingested(tmp_path_factory):
    base = tmp_path_factory.mktemp("artifact-secrets")
    records = [{"conversation": f"c-{name}", "seq": 1, "speaker": "Dev", "role": "user",
                "text": f"Before the {name} part.\n{text}\n\nAfter the {name} part."}
               for name, (text, _) in sorted(PLANTED.items())]
    (base / "chat.jsonl").write_text(lines_of(records), encoding="utf-8")
    state = base / "state"
    summary = ArtifactIntake(ChatJsonlReader(), SqliteArtifactStore(state)).ingest(
        "team", [str(base / "chat.jsonl")])
    assert summary.records == len(PLANTED) and summary.refused == 0
    return state


@pytest.mark.parametrize("name", sorted(PLANTED))
def test_no_planted_secret_is_in_the_store_files_bytes(ingested, name):
    raw = store_bytes(ingested)
    _, gone = PLANTED[name]
    assert [piece for piece in gone if piece.encode("utf-8") in raw] == []
    # The message itself was stored: its clean words are there, and a marker says what went.
    conn = sqlite3.connect(artifacts_path(ingested))
    (text,), = conn.execute("SELECT text FROM messages WHERE conversation = ?", (f"c-{name}",))
    conn.close()
    assert text.endswith(f"After the {name} part.")
    assert "[REDACTED:" in text or "[PRIVATE:removed]" in text
