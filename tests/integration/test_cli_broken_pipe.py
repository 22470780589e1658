"""`ai-memory ... | head`: the reader leaves early and the command ends quietly."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
SMALLEST_PIPE = 4096  # one page: the least Linux lets a pipe hold


def test_a_reader_that_stops_early_gets_no_traceback(tmp_path: Path):
    note = tmp_path / "Long.md"
    note.write_text("# Long\n\n" + "".join(f"step {i} of a long runbook\n" for i in range(1500)),
                    encoding="utf-8")
    # The output is ten times what the pipe holds, so the command is still writing when the
    # reader goes, however the two processes are scheduled.
    read_end, write_end = os.pipe()
    fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, SMALLEST_PIPE)
    proc = subprocess.Popen([sys.executable, "-m", "memory", "get", "Long.md", "--root",
                             str(tmp_path)], stdout=write_end, stderr=subprocess.PIPE,
                            env={**os.environ, **OFFLINE})
    os.close(write_end)
    with os.fdopen(read_end, "rb", buffering=0) as reader:
        first = reader.readline()  # byte by byte: nothing past the first line is taken
    stderr = proc.stderr.read().decode()
    code = proc.wait(timeout=300)
    assert first.startswith(b"note: Long.md"), first
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr, stderr
    assert code == 141  # as a shell reports a command ended by SIGPIPE
