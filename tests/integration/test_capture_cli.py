"""`ai-memory write` and `ai-memory edit`: body from stdin or a file, read-your-writes, and a
stale hash refused as a JSON error with its own exit code."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
NOTE = "---\nmemory_id: api-retry\ntitle: Retry keys\n---\n# Retry keys\n\nEach attempt has a key.\n"


def cli(root: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memory", *args, "--root", str(root)],
                          input=stdin, capture_output=True, text=True, timeout=600,
                          env={**os.environ, **OFFLINE})


def test_write_then_edit_from_the_command_line(tmp_path):
    root = tmp_path / "memory"
    (root / "Repos/api/Notes").mkdir(parents=True)
    (root / "Repos/api/Notes/retry.md").write_text(NOTE)
    assert cli(root, "refresh").returncode == 0
    body = tmp_path / "body.md"
    body.write_text("Staging deploys need the ocelot flag set.\n")

    written = cli(root, "write", "--title", "Ocelot flag", "--repository", "api",
                  "--body", str(body), "--json")
    assert written.returncode == 0, written.stderr
    note = json.loads(written.stdout)
    assert note["path"] == "Repos/api/Notes/ocelot-flag.md" and note["indexed"] is True
    found = json.loads(cli(root, "search", "ocelot flag staging", "--json").stdout)
    assert found["items"][0]["path"] == note["path"]

    edited = cli(root, "edit", note["path"], note["content_hash"], "append", "--json",
                 stdin="Production needs it too.\n")
    assert edited.returncode == 0, edited.stderr
    stale = cli(root, "edit", note["path"], note["content_hash"], "append", "--json",
                stdin="This must not land.\n")
    error = json.loads(stale.stdout)["error"]
    current = json.loads(edited.stdout)["content_hash"]
    assert (stale.returncode, error["kind"], error["exit_code"]) == (5, "conflict", 5)
    assert current in error["message"]
    text = (root / note["path"]).read_text()
    assert "Production needs it too." in text and "must not land" not in text

    again = cli(root, "write", "--title", "Ocelot flag", "--repository", "api", stdin="x\n")
    assert again.returncode == 2 and again.stderr.startswith("duplicate: ")
    assert "--allow-duplicate" in again.stderr and again.stdout == ""


def printed_hash(output: str, label: str) -> str:
    """The hash as a person copies it from the human output (no --json)."""
    match = re.search(rf"\b{label}:? ([0-9a-f]{{12,64}})\b", output)
    assert match, output
    return match.group(1)


def test_the_hash_get_prints_is_the_one_edit_takes_and_own_edits_chain(tmp_path):
    root = tmp_path / "memory"
    (root / "Repos/api/Notes").mkdir(parents=True)
    (root / "Repos/api/Notes/retry.md").write_text(NOTE)
    assert cli(root, "refresh").returncode == 0

    shown = cli(root, "get", "api-retry")
    assert shown.returncode == 0, shown.stderr
    read = printed_hash(shown.stdout.splitlines()[0], "content_hash")
    first = cli(root, "edit", "api-retry", read, "append", stdin="First.\n")
    assert first.returncode == 0, first.stderr
    second = cli(root, "edit", "api-retry", printed_hash(first.stdout, "content_hash"),
                 "append", stdin="Second.\n")
    assert second.returncode == 0, second.stderr
    assert (root / "Repos/api/Notes/retry.md").read_text().endswith(
        "Each attempt has a key.\nFirst.\nSecond.\n")

    current = printed_hash(second.stdout, "content_hash")
    own = cli(root, "edit", "api-retry", read, "append", stdin="Lost?\n")
    assert own.returncode == 5 and "your own earlier edit" in own.stderr
    assert current in own.stderr and "someone else" not in own.stderr
    other = cli(root, "edit", "api-retry", read, "append", "--agent", "a-teammate",
                stdin="Lost?\n")
    assert other.returncode == 5 and "someone else edited it" in other.stderr
    assert "Lost?" not in (root / "Repos/api/Notes/retry.md").read_text()


def test_a_hash_too_short_or_not_hex_is_a_clear_error(tmp_path):
    root = tmp_path / "memory"
    (root / "Repos/api/Notes").mkdir(parents=True)
    (root / "Repos/api/Notes/retry.md").write_text(NOTE)
    for given, says in (("c3c3593", "only 7 characters, too short"),
                        ("zz" * 8, "other than hex digits")):
        refused = cli(root, "edit", "Repos/api/Notes/retry.md", given, "archive")
        assert refused.returncode == 2, refused.stderr
        assert says in refused.stderr and "Traceback" not in refused.stderr
    assert (root / "Repos/api/Notes/retry.md").read_text() == NOTE
