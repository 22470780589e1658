"""`ai-memory artifacts` from the command line: progress on stderr, a summary, exit codes on
refusal; and the store survives what rebuilds the derived state (`refresh --mode full --force`)."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
NOTE = "---\nmemory_id: api-retry\ntitle: Retry keys\n---\n# Retry keys\n\nEach attempt has a key.\n"


def cli(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memory", *args, "--root", str(root)],
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, **OFFLINE})


def chat(path: Path, *seqs: int) -> Path:
    path.write_text("".join(json.dumps({"conversation": "c-1", "seq": s, "speaker": "Ana",
                                        "project": "api", "text": f"turn {s}"}) + "\n"
                            for s in seqs))
    return path


def test_ingest_summarises_and_a_refused_file_exits_non_zero(tmp_path):
    root = tmp_path / "memory"
    root.mkdir()
    good = chat(tmp_path / "good.jsonl", 1, 2, 3)
    done = cli(root, "artifacts", "ingest", "--format", "chat-jsonl", "--source", "team",
               str(good), "--json")
    assert done.returncode == 0, done.stderr
    assert f"[1/1] {good.resolve()}" in done.stderr
    summary = json.loads(done.stdout)
    assert (summary["conversations"], summary["records"], summary["refused"]) == (1, 3, 0)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"conversation": "c-2", "seq": 1, "text": "fine"}\n{"seq": 2}\n')
    refused = cli(root, "artifacts", "ingest", "--format", "chat-jsonl", "--source", "team",
                  str(bad))
    assert refused.returncode == 2
    assert "1 refused" in refused.stdout and f"{bad.resolve()}:2: missing `conversation`" \
        in refused.stderr
    checked = cli(root, "artifacts", "check")
    assert checked.returncode == 0 and "1 conversations, 3 records: ok" in checked.stdout


def test_a_forced_full_refresh_leaves_the_artifact_store_intact(tmp_path):
    root = tmp_path / "memory"
    (root / "Repos/api/Notes").mkdir(parents=True)
    (root / "Repos/api/Notes/retry.md").write_text(NOTE)
    assert cli(root, "artifacts", "ingest", "--format", "chat-jsonl",
               str(chat(tmp_path / "chat.jsonl", 1, 2))).returncode == 0
    store = root / ".ai-memory" / "artifacts" / "artifacts.sqlite"
    before = hashlib.sha256(store.read_bytes()).hexdigest()
    for args in (("refresh",), ("refresh", "--mode", "full", "--force")):
        refreshed = cli(root, *args)
        assert refreshed.returncode == 0, refreshed.stderr
    assert (root / ".ai-memory" / "index").is_dir()  # the refresh did rebuild the index
    assert hashlib.sha256(store.read_bytes()).hexdigest() == before
    checked = cli(root, "artifacts", "check", "--json")
    assert json.loads(checked.stdout)["records"] == 2


def test_backup_check_and_restore_exit_non_zero_on_a_bad_copy_or_store(tmp_path):
    root = tmp_path / "memory"
    root.mkdir()
    assert cli(root, "artifacts", "ingest", "--format", "chat-jsonl",
               str(chat(tmp_path / "chat.jsonl", 1, 2))).returncode == 0
    copy = tmp_path / "copy.sqlite"
    made = cli(root, "artifacts", "backup", str(copy), "--json")
    assert made.returncode == 0, made.stderr
    assert json.loads(made.stdout)["sha256"] == hashlib.sha256(copy.read_bytes()).hexdigest()
    live = root / ".ai-memory" / "artifacts" / "artifacts.sqlite"
    for path in (live, copy):
        conn = sqlite3.connect(path)
        conn.execute("UPDATE messages SET text = 'forged' WHERE seq = 1")
        conn.commit()
        conn.close()
    damaged = cli(root, "artifacts", "check")
    assert damaged.returncode == 1 and "c-1#1" in damaged.stderr
    refused = cli(root, "artifacts", "restore", str(copy))
    assert refused.returncode == 2 and "does not match its digest" in refused.stderr
