"""A local development connection string is said once, by the refresh that indexes its note,
with how to silence it; searches, reads and health add no warning, and the password never
leaves. A real credential is warned about on each read, as before."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
DEV_NOTE = "# Local db\n\nRun the app against postgres://app:app@localhost:5432/app for work.\n"
REAL_NOTE = "# Staging db\n\nStaging runs on postgres://app:Xk9#mQ2v@db.internal/app today.\n"
SILENCE = "`secrets: allow-dev-credentials`"


def cli(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memory", *args, "--root", str(root)],
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, **OFFLINE})


def warned(run: subprocess.CompletedProcess, path: str) -> list[str]:
    return [line for line in run.stderr.splitlines() + run.stdout.splitlines()
            if line.startswith("warning:") and path in line]


def test_a_dev_credential_is_said_once_at_refresh_and_hidden_everywhere(tmp_path):
    root = tmp_path / "memory"
    (root / "notes").mkdir(parents=True)
    (root / "notes/local-db.md").write_text(DEV_NOTE)
    (root / "notes/staging-db.md").write_text(REAL_NOTE)
    first = cli(root, "refresh")
    assert first.returncode == 0, first.stderr
    notice = warned(first, "notes/local-db.md")
    assert len(notice) == 1 and SILENCE in notice[0] and "line(s) 3" in notice[0]
    assert "secret-shaped" in warned(first, "notes/staging-db.md")[0]
    again = cli(root, "refresh")  # nothing changed: nothing re-read, nothing said
    assert not warned(again, "notes/local-db.md")

    search = cli(root, "search", "app against local work")
    got = cli(root, "get", "notes/local-db.md")
    health = cli(root, "health")
    for run in (search, got, health):
        assert run.returncode == 0, run.stderr
        assert not warned(run, "notes/local-db.md"), run
        assert "app:app@" not in run.stdout + run.stderr
    assert "postgres://app:[REDACTED:url-password]@localhost:5432/app" in search.stdout
    assert "postgres://app:[REDACTED:url-password]@localhost:5432/app" in got.stdout
    # Health is the inventory of what is hidden, asked for on purpose: it lists the note.
    assert "secret-shaped text: notes/local-db.md lines 3 (url-password)" in health.stdout

    real = cli(root, "get", "notes/staging-db.md")  # a real credential: warned on each read
    assert len(warned(real, "notes/staging-db.md")) == 1
    assert "Xk9#mQ2v" not in real.stdout + real.stderr


def test_the_front_matter_silences_the_refresh_notice(tmp_path):
    root = tmp_path / "memory"
    (root / "notes").mkdir(parents=True)
    (root / "notes/local-db.md").write_text("---\nsecrets: allow-dev-credentials\n---\n"
                                            + DEV_NOTE)
    run = cli(root, "refresh")
    assert run.returncode == 0, run.stderr
    assert not warned(run, "notes/local-db.md")
    assert "app:app@" not in cli(root, "get", "notes/local-db.md").stdout
