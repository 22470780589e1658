"""WatchfilesChangeFeed on a real folder: what it reports, how it groups bursts, how it stops."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from memory.adapters.watch import WatchfilesChangeFeed


class Bursts:
    """Records each burst the feed reports (on the feed's thread)."""

    def __init__(self):
        self.calls: list[frozenset[str]] = []
        self._event = threading.Event()

    def __call__(self, paths: frozenset[str]) -> None:
        self.calls.append(paths)
        self._event.set()

    def wait(self, timeout: float = 10.0) -> frozenset[str]:
        assert self._event.wait(timeout), "no burst reported"
        self._event.clear()
        return self.calls[-1]

    def settle(self, quiet: float = 1.0) -> None:
        """Until no burst came for `quiet` seconds."""
        while self._event.wait(quiet):
            self._event.clear()

    @property
    def paths(self) -> set[str]:
        return {p for call in self.calls for p in call}


@pytest.fixture
def root(tmp_path) -> Path:
    for folder in ("Repos/alpha/Notes", ".ai-memory", ".git", ".obsidian", ".trash"):
        (tmp_path / folder).mkdir(parents=True)
    return tmp_path


@pytest.fixture
def feed(root):
    feed = WatchfilesChangeFeed(root, root / ".ai-memory", quiet_ms=150)
    yield feed
    feed.stop()


def test_reports_markdown_changes_relative_to_the_root_and_nothing_hidden(root, feed):
    bursts = Bursts()
    feed.start(bursts)
    for hidden in (".ai-memory/index.md", ".git/HEAD.md", ".obsidian/workspace.md",
                   ".trash/old.md", "Repos/alpha/Notes/.draft.md.swp"):
        (root / hidden).write_text("x")
    (root / "Repos/alpha/Notes/image.png").write_bytes(b"\x89PNG")
    (root / "Repos/alpha/Notes/Deploy.md").write_text("# Deploy\n")
    (root / "README.MD").write_text("# Root\n")
    assert bursts.wait()
    bursts.settle()
    assert bursts.paths == {"Repos/alpha/Notes/Deploy.md", "README.MD"}


def test_deleting_and_renaming_are_reported(root, feed):
    note = root / "Repos/alpha/Notes/Old.md"
    note.write_text("# Old\n")
    bursts = Bursts()
    feed.start(bursts)
    note.rename(root / "Repos/alpha/Notes/New.md")
    bursts.wait()
    bursts.settle()
    assert {"Repos/alpha/Notes/Old.md", "Repos/alpha/Notes/New.md"} <= bursts.paths
    (root / "Repos/alpha/Notes").rename(root / "Repos/alpha/Moved")  # a folder: no .md events
    bursts.wait()
    bursts.settle()
    assert "Repos/alpha/Moved" in bursts.paths or "Repos/alpha/Notes" in bursts.paths


def test_a_burst_of_200_files_is_reported_once_or_a_few_times(root, feed):
    bursts = Bursts()
    feed.start(bursts)
    for i in range(200):
        (root / "Repos/alpha/Notes" / f"n{i:03}.md").write_text(f"# {i}\n")
    bursts.wait()
    bursts.settle()
    assert 1 <= len(bursts.calls) <= 3, [len(c) for c in bursts.calls]
    assert len(bursts.paths) == 200


def test_changes_made_while_a_burst_is_handled_form_the_next_burst(root, feed):
    calls: list[frozenset[str]] = []
    second = threading.Event()

    def slow(paths):  # a refresh that takes a while
        calls.append(paths)
        if len(calls) == 1:
            (root / "During.md").write_text("# during\n")
            time.sleep(0.5)
        else:
            second.set()

    feed.start(slow)
    (root / "First.md").write_text("# first\n")
    assert second.wait(10)
    assert calls[0] == {"First.md"} and "During.md" in calls[1]


def test_settling_is_true_between_the_first_event_and_the_report(root, tmp_path):
    feed = WatchfilesChangeFeed(root, quiet_ms=1500)
    bursts = Bursts()
    feed.start(bursts)
    try:
        assert not feed.settling()
        (root / "Note.md").write_text("# note\n")
        deadline = time.monotonic() + 5
        while not feed.settling():
            assert time.monotonic() < deadline, "never settling"
            time.sleep(0.01)
        assert not bursts.calls
        bursts.wait()
        assert not feed.settling()
    finally:
        feed.stop()


def test_stop_ends_the_thread_promptly(root):
    feed = WatchfilesChangeFeed(root)
    assert not feed.alive()
    feed.start(Bursts())
    assert feed.alive()
    feed.stop()
    assert not feed.alive()
    assert not any(t.name == "ai-memory-watch" and t.is_alive() for t in threading.enumerate())
    feed.stop()  # twice is fine
