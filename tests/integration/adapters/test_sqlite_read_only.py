"""A read-only state folder: whatever must be written fails with a StoreError naming the
folder, reads keep serving, nothing raises a bare PermissionError.

Root ignores file modes, so as root the checks run in a child process as the unprivileged
user `nobody` (setpriv or runuser, present in any util-linux, so also in a root CI
container); as anyone else the modes alone make the folder read-only.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from test_sqlite_generations import DIM, entry, make_doc, publish, vectors_for

from memory.adapters.sqlite import SqliteEmbeddingCache, SqliteGenerations, SqliteIndex

SRC = Path(__file__).resolve().parents[3] / "src"
CHECKS = r"""
import json, sys
from memory.adapters.sqlite import (SqliteEmbeddingCache, SqliteGenerations, SqliteIndex,
                                    SqliteLexicalIndex)
from memory.domain.scope import ScopeFilter, StatusFilter
from memory.ports.errors import StoreError

state = sys.argv[1]
index = SqliteIndex(state)
gens = SqliteGenerations(index)
cache = SqliteEmbeddingCache(state)
out = {}

def attempt(name, call):
    try:
        out[name] = ["ok", repr(call())[:200]]
    except StoreError as exc:
        out[name] = ["store-error", str(exc)]
    except BaseException as exc:
        out[name] = ["uncaught", f"{type(exc).__name__}: {exc}"]

attempt("current", lambda: gens.current().id)
attempt("search", lambda: [h.note.memory_id for h in SqliteLexicalIndex(index).search(
    "shared", ScopeFilter(status=StatusFilter.ANY), 5)])
attempt("incremental stage", lambda: gens.stage(gens.current().id))
attempt("full stage", lambda: gens.stage(None))
attempt("collect", lambda: gens.collect(3, 0))
attempt("cache read", lambda: sorted(cache.get_many("m", ["h"])))
attempt("cache write", lambda: cache.put_many("m", {"new": [1.0, 2.0]}))
print(json.dumps(out))
"""


def _unprivileged() -> list[str]:
    if os.geteuid() != 0:
        return []
    for tool in (["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"],
                 ["runuser", "-u", "nobody", "--"]):
        if shutil.which(tool[0]):
            return tool
    pytest.fail("running as root, and neither setpriv nor runuser can drop to nobody")


def _set_modes(folder: Path, writable: bool) -> None:
    for path in [folder, *folder.rglob("*")]:
        mode = path.stat().st_mode | stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH
        if path.is_dir():
            mode |= stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH
        write = stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH
        os.chmod(path, (mode | stat.S_IWUSR) if writable else (mode & ~write))


@pytest.fixture
def read_only_state():
    """A state folder with a published index and a cache, every file and folder read-only
    (in a folder `nobody` may enter: pytest's own tmp folder is private to its user)."""
    base = Path(tempfile.mkdtemp(prefix="ai-memory-read-only-"))
    os.chmod(base, 0o755)
    state = base / ".ai-memory"
    index = SqliteIndex(state)
    gens = SqliteGenerations(index)
    first = publish(gens, [make_doc("one", "shared words one")])
    stage = gens.stage(first.id)
    doc = make_doc("two", "shared words two")
    stage.add(doc, entry(doc), vectors_for(doc, 2))
    stage.publish("test-model", DIM, {"ok": True})
    SqliteEmbeddingCache(state).put_many("m", {"h": [0.5, 0.25]})
    index.close()
    _set_modes(state, writable=False)
    yield state
    _set_modes(state, writable=True)
    shutil.rmtree(base)


def _checks(state: Path) -> dict:
    done = subprocess.run([*_unprivileged(), sys.executable, "-c", CHECKS, str(state)],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(SRC)})
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_read_only_state_folder_serves_and_refuses_writes_with_a_clear_error(read_only_state):
    out = _checks(read_only_state)
    assert not [name for name, (kind, _) in out.items() if kind == "uncaught"], out
    assert out["current"][0] == "ok" and out["cache read"] == ["ok", "['h']"], out
    assert out["search"] == ["ok", "['one', 'two']"], out
    for name in ("incremental stage", "full stage", "cache write"):
        kind, message = out[name]
        assert kind == "store-error", (name, out[name])
        assert str(read_only_state) in message and "read-only" in message.lower() \
            or "permission denied" in message.lower(), (name, message)


def test_a_read_only_folder_without_the_shared_log_files_still_serves(read_only_state):
    """Copied without its -wal and -shm files (every page is in the database file then)."""
    index = read_only_state / "index"
    _set_modes(index, writable=True)
    for side in [*index.glob("*-wal"), *index.glob("*-shm")]:
        side.unlink()
    _set_modes(index, writable=False)
    out = _checks(read_only_state)
    assert out["search"] == ["ok", "['one', 'two']"], out
    assert out["incremental stage"][0] == "store-error", out
