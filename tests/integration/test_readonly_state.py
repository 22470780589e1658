"""A state folder (or a part of it) that cannot be written: every refresh path says what could
not be written, in one line, and whatever was published keeps serving.

Run as root, permissions do not stop writes: the folder is then bind-mounted read-only in a
private mount namespace (`unshare --mount`) around the command under test.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
AS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
UNWRITABLE = ("Read-only file system", "Permission denied", "is read-only")


@pytest.fixture(scope="module")
def anyio_backend():
    return "asyncio"


def env() -> dict[str, str]:
    drop = ("AI_MEMORY_ROOT", "AI_MEMORY_STATE_DIR")
    return {**{k: v for k, v in os.environ.items() if k not in drop}, **OFFLINE}


def ai_memory(*args: str) -> list[str]:
    return [sys.executable, "-m", "memory", *args]


@contextmanager
def read_only(folder: Path):
    """A command prefix under which `folder` cannot be written (nothing changes outside it)."""
    if AS_ROOT:
        # util-linux (an essential package) ships unshare(1): its absence is a broken machine,
        # not a reason to leave the read-only state untested.
        assert shutil.which("unshare"), "running as root needs unshare(1) (util-linux) " \
                                        "to make a folder read-only"
        yield ["unshare", "--mount", "sh", "-c",
               'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"',
               "sh", str(folder)]
        return
    modes = {p: p.stat().st_mode for p in [folder, *folder.rglob("*")]}
    for path, mode in modes.items():
        path.chmod(mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    try:
        yield []
    finally:
        for path, mode in modes.items():
            path.chmod(mode)


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("readonly") / "memory"
    (base / "Notes").mkdir(parents=True)
    for i in range(3):
        (base / "Notes" / f"n{i}.md").write_text(f"# Note {i}\n\nThe wombat rota, part {i}.\n")
    done = subprocess.run([*ai_memory("refresh", "--mode", "full", "--root", str(base))],
                          capture_output=True, text=True, timeout=900, env=env())
    assert done.returncode == 0, done.stderr[-2000:]
    (base / "Notes" / "new.md").write_text("# New\n\nA note the next refresh must index.\n")
    return base


def run(prefix: list[str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*prefix, *ai_memory(*args)], capture_output=True, text=True,
                          timeout=900, env=env())


@pytest.mark.parametrize("part,mode", [("", "index"), ("", "full"), ("index", "index"),
                                       ("graph", "full"), ("locks", "index")])
def test_a_refresh_that_cannot_write_names_what_it_could_not_write(root, part, mode):
    # Each case has an edit to index: the search below indexes the last one itself (as any
    # command line read catches up with small edits).
    (root / "Notes" / "new.md").write_text(f"# New\n\nA note to index ({part}, {mode}).\n")
    folder = root / ".ai-memory" / part
    with read_only(folder) as prefix:
        done = run(prefix, "refresh", "--mode", mode, "--root", str(root))
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    assert done.returncode == 1, (done.returncode, done.stderr[-2000:])
    said = done.stdout + done.stderr
    assert any(reason in said for reason in UNWRITABLE), said[-2000:]
    assert str(folder.resolve()) in said  # the file or folder it could not write
    search = run([], "search", "wombat rota", "--root", str(root), "--json")
    assert search.returncode == 0 and "Notes/n1.md" in search.stdout  # the last good index


@pytest.mark.anyio
async def test_memory_refresh_on_a_read_only_state_folder_is_a_tool_error(root, tmp_path):
    with read_only(root / ".ai-memory") as prefix:
        command, *args = [*prefix, *ai_memory("serve", "--no-watch", "--root", str(root))]
        params = StdioServerParameters(command=command, args=args, env=env())
        with (tmp_path / "serve.stderr").open("w") as err:
            async with stdio_client(params, errlog=err) as (read, write):
                async with ClientSession(read, write) as session:
                    with anyio.fail_after(600):
                        await session.initialize()
                        refreshed = await session.call_tool("memory_refresh", {"mode": "full"})
                        found = await session.call_tool("memory_search", {"query": "wombat rota"})
    text = refreshed.content[0].text
    assert refreshed.is_error and text.startswith("error: "), text
    assert any(reason in text for reason in UNWRITABLE) and ".ai-memory" in text, text
    assert not found.is_error and found.structured_content["items"]
    assert "Traceback" not in (tmp_path / "serve.stderr").read_text()
