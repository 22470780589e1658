"""`ai-memory ... | head`: the reader leaves early and the command ends quietly."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}


def test_a_reader_that_stops_early_gets_no_traceback(tmp_path: Path):
    note = tmp_path / "Long.md"
    note.write_text("# Long\n\n" + "".join(f"step {i} of a long runbook\n" for i in range(5000)),
                    encoding="utf-8")
    # More than a pipe holds (64 KiB): the command is still writing when the reader goes.
    proc = subprocess.Popen([sys.executable, "-m", "memory", "get", "Long.md", "--root",
                             str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, **OFFLINE})
    first = proc.stdout.readline()
    proc.stdout.close()  # as `head -1` does
    stderr = proc.stderr.read().decode()
    code = proc.wait(timeout=300)
    assert first.startswith(b"note: Long.md")
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr, stderr
    assert code == 141  # as a shell reports a command ended by SIGPIPE
