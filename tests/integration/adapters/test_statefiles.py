"""Statefiles: the refresh lock across processes, JSONL journals, the state directory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from memory.adapters.statefiles import (FileRefreshLock, JsonlFeedbackLog, JsonlRefreshHistory,
                                        SystemClock, ensure_state_dir)
from memory.domain.errors import RefreshBusy
from memory.ports.clock import Clock
from memory.ports.journal import FeedbackLog, RefreshHistory
from memory.ports.lock import RefreshLock

SRC = str(Path(__file__).resolve().parents[3] / "src")


def python(code: str, *args: str, **kwargs) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")]))
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code), *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs)


HOLDER = """
    import sys, time
    from memory.adapters.statefiles import FileRefreshLock
    with FileRefreshLock(sys.argv[1]).hold(timeout=10):
        print("held", flush=True)
        time.sleep(float(sys.argv[2]))
"""


def spawn_holder(state_dir: Path, seconds: float) -> subprocess.Popen:
    holder = python(HOLDER, str(state_dir), str(seconds))
    assert holder.stdout.readline().strip() == "held", holder.stderr.read()
    return holder


def test_adapters_satisfy_their_ports(tmp_path):
    assert isinstance(FileRefreshLock(tmp_path), RefreshLock)
    assert isinstance(JsonlFeedbackLog(tmp_path), FeedbackLog)
    assert isinstance(JsonlRefreshHistory(tmp_path), RefreshHistory)
    assert isinstance(SystemClock(), Clock)


def test_lock_excludes_a_second_process_and_times_out_as_refresh_busy(tmp_path):
    holder = spawn_holder(tmp_path, 30)
    try:
        started = time.monotonic()
        with pytest.raises(RefreshBusy, match=f"pid {holder.pid}"):
            with FileRefreshLock(tmp_path).hold(timeout=0.5):
                pytest.fail("two holders at once")
        assert 0.4 <= time.monotonic() - started < 5
    finally:
        holder.kill()
        holder.wait()


def test_lock_is_released_when_the_holder_is_killed(tmp_path):
    holder = spawn_holder(tmp_path, 60)
    holder.kill()
    holder.wait()
    with FileRefreshLock(tmp_path).hold(timeout=5):
        assert (tmp_path / "locks").is_dir()


def test_lock_waits_for_a_holder_that_finishes_in_time(tmp_path):
    holder = spawn_holder(tmp_path, 0.5)
    with FileRefreshLock(tmp_path).hold(timeout=20):
        pass
    assert holder.wait(10) == 0


def test_lock_is_released_after_the_block_even_on_error(tmp_path):
    lock = FileRefreshLock(tmp_path)
    with pytest.raises(ZeroDivisionError):
        with lock.hold(timeout=1):
            1 / 0
    with lock.hold(timeout=0):
        with pytest.raises(RefreshBusy):  # no silent re-entry, even in one process
            with lock.hold(timeout=0):
                pass


def test_state_dir_gets_a_gitignore_once(tmp_path):
    state = tmp_path / "deep" / ".ai-memory"
    assert ensure_state_dir(state) == state
    assert (state / ".gitignore").read_text() == "*\n"
    (state / ".gitignore").write_text("custom\n")
    ensure_state_dir(state)
    assert (state / ".gitignore").read_text() == "custom\n"
    with FileRefreshLock(tmp_path / "other").hold(1):
        assert (tmp_path / "other" / ".gitignore").is_file()


def test_feedback_log_appends_and_counts(tmp_path):
    log = JsonlFeedbackLog(tmp_path / "state")
    assert log.count() == 0
    log.append({"query": "retry policy", "memory_id": "n1", "helpful": True})
    log.append({"query": "ünïcode ✓", "memory_id": "n2", "helpful": False})
    assert log.count() == 2
    lines = log.path.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["memory_id"] for line in lines] == ["n1", "n2"]
    assert (tmp_path / "state" / ".gitignore").is_file()


def test_history_last_is_the_newest_record(tmp_path):
    history = JsonlRefreshHistory(tmp_path)
    assert history.last() is None
    for i in range(3):
        history.append({"n": i})
    assert history.last() == {"n": 2}


def test_history_last_reads_backwards_across_blocks(tmp_path):
    history = JsonlRefreshHistory(tmp_path)
    history.append({"n": 0, "pad": "x" * 20000})
    history.append({"n": 1, "pad": "y" * 20000})
    assert history.last()["n"] == 1
    with open(history.path, "ab") as handle:  # a torn record longer than a read block
        handle.write(b'{"n": 2, "pad": "' + b"z" * 20000)
    assert history.last()["n"] == 1


def test_torn_last_line_is_tolerated_and_the_next_append_starts_clean(tmp_path):
    history = JsonlRefreshHistory(tmp_path)
    history.append({"n": 1})
    with open(history.path, "ab") as handle:
        handle.write(b'{"n": 2, "mode": "ful')
    assert history.last() == {"n": 1}
    history.append({"n": 3})
    assert history.last() == {"n": 3}
    log = JsonlFeedbackLog(tmp_path)
    log.path.write_bytes(b'{"a": 1}\n\nnot json\n[1, 2]\n{"b": 2')
    assert log.count() == 1
    log.append({"c": 3})
    assert log.count() == 2


APPENDER = """
    import sys
    from memory.adapters.statefiles import JsonlFeedbackLog
    log = JsonlFeedbackLog(sys.argv[1])
    for i in range(int(sys.argv[3])):
        log.append({"writer": sys.argv[2], "i": i, "text": "w" * (i * 37 % 900)})
"""


def test_appenders_in_several_processes_yield_only_whole_lines(tmp_path):
    writers, each = 4, 150
    procs = [python(APPENDER, str(tmp_path), str(w), str(each)) for w in range(writers)]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    lines = (tmp_path / "feedback.jsonl").read_bytes().split(b"\n")
    assert lines.pop() == b""
    records = [json.loads(line) for line in lines]
    assert len(records) == writers * each == JsonlFeedbackLog(tmp_path).count()
    for w in range(writers):
        mine = [r["i"] for r in records if r["writer"] == str(w)]
        assert mine == list(range(each))


def test_records_that_are_not_json_are_refused(tmp_path):
    from memory.ports.errors import StoreError

    with pytest.raises(StoreError):
        JsonlFeedbackLog(tmp_path).append({"when": object()})
    assert JsonlFeedbackLog(tmp_path).count() == 0


def test_system_clock():
    clock = SystemClock()
    stamp = clock.now_iso()
    assert len(stamp) == 25 and stamp[10] == "T" and stamp.endswith("+00:00")
    first = clock.monotonic()
    assert clock.monotonic() >= first
