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
        with pytest.raises(RefreshBusy, match=f"pid {holder.pid}"):
            with FileRefreshLock(tmp_path).hold(timeout=0.5):
                pytest.fail("two holders at once")
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


# -- the lock gives up waiting when cancelled; the progress board --------------------------

import threading  # noqa: E402

from memory.adapters.inmemory import InMemoryLock, InMemoryRefreshProgress  # noqa: E402
from memory.adapters.statefiles import JsonRefreshProgress  # noqa: E402
from memory.domain.cancellation import CancelToken, Cancelled  # noqa: E402
from memory.domain.refresh import BuildProgress  # noqa: E402
from memory.ports.errors import StoreError  # noqa: E402
from memory.ports.refresh_progress import RefreshProgressBoard  # noqa: E402


@pytest.mark.parametrize("make_lock", [FileRefreshLock, lambda _: InMemoryLock()],
                         ids=["file", "in-memory"])
def test_a_cancelled_wait_for_the_lock_stops_waiting(tmp_path, make_lock):
    lock, cancel, released = make_lock(tmp_path), CancelToken(), threading.Event()
    held = threading.Event()

    def hold():
        with lock.hold(timeout=5):
            held.set()
            released.wait(60)

    holder = threading.Thread(target=hold)
    holder.start()
    assert held.wait(10)
    threading.Timer(0.3, cancel.cancel, args=("the client gave up",)).start()
    # Without the cancel this would wait the full 60 s and end in RefreshBusy.
    with pytest.raises(Cancelled, match="the client gave up"):
        with lock.hold(timeout=60, cancel=cancel):
            pytest.fail("acquired a held lock")
    released.set()
    holder.join()
    with lock.hold(timeout=5):
        pass


def test_a_lock_file_that_cannot_be_opened_is_a_store_error_naming_it(tmp_path):
    lock = FileRefreshLock(tmp_path)
    lock.path.parent.mkdir(parents=True)
    lock.path.mkdir()  # a folder where the lock file should be: no one can open it for writing
    with pytest.raises(StoreError, match=f"cannot write {lock.path}"):
        with lock.hold(timeout=1):
            pytest.fail("held an unopenable lock")


@pytest.fixture(params=["json-file", "in-memory"])
def board(request, tmp_path) -> RefreshProgressBoard:
    return JsonRefreshProgress(tmp_path, every_s=0.0) if request.param == "json-file" \
        else InMemoryRefreshProgress()


def test_the_board_shows_the_last_progress_until_cleared(board):
    assert isinstance(board, RefreshProgressBoard)
    assert board.read() is None
    board.post(BuildProgress(stage="index", done=10, total=40))
    board.post(BuildProgress(stage="index", done=20, total=40))
    shown = board.read()
    assert (shown.stage, shown.done, shown.total, shown.pid) == ("index", 20, 40, None)
    board.clear()
    assert board.read() is None


def test_another_process_reads_the_progress_with_the_writers_pid(tmp_path):
    writer = python("""
        import sys
        from memory.adapters.statefiles import JsonRefreshProgress
        from memory.domain.refresh import BuildProgress
        JsonRefreshProgress(sys.argv[1]).post(BuildProgress(stage="index", done=3, total=9))
        print("posted", flush=True)
        sys.stdin.readline()
    """, str(tmp_path), stdin=subprocess.PIPE)
    try:
        assert writer.stdout.readline().strip() == "posted", writer.stderr.read()
        shown = JsonRefreshProgress(tmp_path).read()
        assert shown.describe() == f"index being built: 3 of 9 notes, by process {writer.pid}"
    finally:
        writer.stdin.close()
        writer.wait(30)
    # Its process is gone: what it left reads as nothing, not as a build still running.
    assert (tmp_path / "refresh-progress.json").exists()
    assert JsonRefreshProgress(tmp_path).read() is None


def test_posts_are_thrown_away_between_writes_but_the_last_step_is_written(tmp_path):
    board = JsonRefreshProgress(tmp_path, every_s=3600.0)
    board.post(BuildProgress(stage="index", done=0, total=3))
    board.post(BuildProgress(stage="index", done=1, total=3))  # within the interval: dropped
    assert board.read().done == 0
    board.post(BuildProgress(stage="graph", done=0, total=1))  # a new stage is news
    assert board.read().stage == "graph"
    board.post(BuildProgress(stage="graph", done=1, total=1))  # so is the end of one
    assert board.read().done == 1


def test_a_board_that_cannot_be_written_never_fails_the_refresh(tmp_path, caplog):
    (tmp_path / "refresh-progress.json").mkdir()  # a folder in its place: os.replace fails
    board = JsonRefreshProgress(tmp_path, every_s=0.0)
    board.post(BuildProgress(stage="index", done=1, total=2))
    board.post(BuildProgress(stage="index", done=2, total=2))
    board.clear()
    warned = [r for r in caplog.records if "refresh progress not shared" in r.getMessage()]
    assert len(warned) == 1  # said once, not for every batch
