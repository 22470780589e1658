"""Read-your-writes on in-memory adapters: what a search does about edits the index lacks."""

import threading
import time

import pytest

from builders import World, edit, make_doc

from memory.adapters.inmemory import InMemoryChangeFeed, InMemoryNoteSource, InMemoryRefreshHistory
from memory.application.refresh.changes_only_history import ChangesOnlyHistory
from memory.application.refresh.freshness import FreshnessConfig, FreshnessPolicy
from memory.application.refresh.indexer import Indexer, RefreshPolicy
from memory.application.service import MemoryService
from memory.domain.errors import Unavailable
from memory.domain.model_state import EmbedderState


class CountingSource(InMemoryNoteSource):
    """Counts directory scans: the hot path must not scan when a watcher is on."""

    def __init__(self, docs):
        super().__init__(docs)
        self.scans = 0

    def scan(self):
        self.scans += 1
        return super().scan()


class Ticking:
    """A clock tests move by hand (monotonic) that still reads like the fixed one."""

    def __init__(self):
        self.now = 100.0

    def now_iso(self):
        return "2026-01-15T12:00:00+00:00"

    def monotonic(self):
        return self.now


class RealTime(Ticking):
    def monotonic(self):
        return time.monotonic()


def docs():
    return [make_doc(f"Decisions/D{i}.md", f"# D{i}\n\nDecision {i} about topic{i}.\n")
            for i in range(4)]


class Fresh:
    """A World whose service asks a FreshnessPolicy before each search."""

    def __init__(self, *, watch: bool, clock=None, config: FreshnessConfig | None = None,
                 lock_timeout_s: float = 3.0, embedder=None, board=None, graph: bool = False,
                 batch: int = 256):
        self.world = w = World(embedder=embedder)
        w.source = CountingSource(docs())
        self.clock = clock or Ticking()
        self.feed = InMemoryChangeFeed() if watch else None
        graphs = w.graph if graph else None
        self.indexer = Indexer(w.source, w.generations, w.embedder, w.cache, w.lock, self.clock,
                               w.history, graphs, board=board,
                               policy=RefreshPolicy(lock_timeout_s=lock_timeout_s,
                                                    embed_batch=batch))
        self.policy = FreshnessPolicy(source=w.source, index=w.generations, indexer=self.indexer,
                                      embedder=w.embedder, clock=self.clock, feed=self.feed,
                                      config=config, board=board)
        w.indexer = Indexer(w.source, w.generations, w.embedder, w.cache, w.lock, self.clock,
                            w.history, graphs)
        self.service = MemoryService(
            engine=w.engine, indexer=w.indexer, source=w.source,
            lexical=w.chunks, catalogue=w.chunks, index=w.generations, graph=graphs,
            graphs=graphs, embedder=w.embedder, feedback=w.feedback, history=w.history,
            clock=self.clock, before_search=self.policy.before_search)
        self.service.refresh("full" if graph else "index")

    def forget_index(self) -> None:
        """As `rm -rf .ai-memory` does: the store has no current generation any more."""
        self.world.index.generations.clear()
        self.world.index.current_id = None

    def write(self, path: str, body: str) -> None:
        source = self.world.source
        try:
            source.put(edit(source.load(path), body))
        except Exception:  # noqa: BLE001 - a new note
            source.put(make_doc(path, body))

    def records(self) -> int:
        return len(self.world.history.records)


def top_path(packet) -> str | None:
    return packet.items[0].path if packet.items else None


# -- with a watcher --------------------------------------------------------------------------

def test_a_quiet_watched_root_costs_a_search_no_scan():
    f = Fresh(watch=True)
    f.policy.start()
    scans = f.world.source.scans
    for _ in range(5):
        assert f.service.search("topic1").freshness == "current"
    assert f.world.source.scans == scans


def test_a_reported_burst_is_indexed_by_the_watcher_before_anyone_searches():
    f = Fresh(watch=True)
    f.policy.start()
    f.write("Decisions/D1.md", "# D1\n\nDecision one now says quokka.\n")
    before = f.records()
    f.feed.emit(["Decisions/D1.md"])
    assert f.records() == before + 1
    packet = f.service.search("quokka")
    assert packet.freshness == "current"
    assert top_path(packet) == "Decisions/D1.md"


def test_a_burst_still_settling_is_indexed_before_the_search():
    f = Fresh(watch=True)
    f.policy.start()
    f.write("Decisions/New.md", "# New\n\nThe zanzibar rollout plan.\n")
    f.feed.settling_now = True
    packet = f.service.search("zanzibar rollout")
    assert packet.freshness == "refreshed-before-search"
    assert top_path(packet) == "Decisions/New.md"
    # the burst reported afterwards finds nothing left to do: no second refresh
    records = f.records()
    f.feed.settling_now = False
    f.feed.emit(["Decisions/New.md"])
    assert f.records() == records


def test_starting_to_watch_indexes_edits_made_while_nobody_watched():
    f = Fresh(watch=True)
    f.write("Decisions/D2.md", "# D2\n\nDecision two now says wombat.\n")
    f.policy.start()
    assert f.feed.started
    assert top_path(f.service.search("wombat")) == "Decisions/D2.md"


def test_stop_stops_the_feed_and_later_bursts_are_ignored():
    f = Fresh(watch=True)
    f.policy.start()
    f.policy.stop()
    assert f.feed.stopped and not f.policy.watching


def test_a_second_server_finds_nothing_left_to_refresh():
    first = Fresh(watch=True)
    w = first.world
    second = FreshnessPolicy(
        source=w.source, index=w.generations, embedder=w.embedder, clock=first.clock,
        indexer=Indexer(w.source, w.generations, w.embedder, w.cache, w.lock, first.clock,
                        w.history), feed=InMemoryChangeFeed())
    first.policy.start()
    second.start()
    first.write("Decisions/D3.md", "# D3\n\nDecision three now says okapi.\n")
    before = first.records()
    first.feed.emit(["Decisions/D3.md"])
    second._feed.emit(["Decisions/D3.md"])
    assert first.records() == before + 1  # one refresh for two servers


# -- without a watcher -----------------------------------------------------------------------

def test_without_a_watcher_a_search_scans_at_most_once_a_second():
    f = Fresh(watch=False)
    assert f.service.search("topic1").freshness == "current"
    f.write("Decisions/D1.md", "# D1\n\nDecision one now says capybara.\n")
    scans = f.world.source.scans
    assert f.service.search("capybara").freshness == "current"  # checked 0 s ago
    assert f.world.source.scans == scans
    f.clock.now += 1.5
    packet = f.service.search("capybara")
    assert packet.freshness == "refreshed-before-search"
    assert top_path(packet) == "Decisions/D1.md"
    assert f.service.search("capybara").freshness == "current"
    f.clock.now += 1.5
    assert f.service.search("capybara").freshness == "current"


def test_too_many_changes_are_not_indexed_in_the_search_path():
    f = Fresh(watch=False, config=FreshnessConfig(max_search_files=2))
    for i in range(3):
        f.write(f"Decisions/Bulk{i}.md", f"# Bulk {i}\n\nbulk note {i}\n")
    f.clock.now += 2
    before = f.records()
    packet = f.service.search("bulk note")
    assert packet.freshness == "stale"
    assert any("3 notes changed" in w and "memory_refresh" in w for w in packet.warnings)
    assert f.records() == before


def test_a_loading_model_leaves_the_edit_for_later_and_says_so():
    f = Fresh(watch=False)
    f.write("Decisions/D0.md", "# D0\n\nchanged while loading\n")
    f.world.embedder._state = EmbedderState.LOADING
    f.clock.now += 2
    packet = f.service.search("changed while loading")
    assert packet.freshness == "stale"
    assert any("embedding model" in w for w in packet.warnings)


class OtherProcess:
    """Holds the refresh lock from another thread, as a second server would."""

    def __init__(self, lock):
        self._lock, self._held, self._release = lock, threading.Event(), threading.Event()
        self._thread = threading.Thread(target=self._run)

    def _run(self):
        with self._lock.hold(1.0):
            self._held.set()
            self._release.wait(10)

    def __enter__(self):
        self._thread.start()
        self._held.wait(5)
        return self

    def __exit__(self, *exc):
        self._release.set()
        self._thread.join()


def test_another_process_holding_the_lock_gives_a_stale_packet_within_budget():
    f = Fresh(watch=False, clock=RealTime(), lock_timeout_s=0.05,
              config=FreshnessConfig(search_budget_s=0.3, check_interval_s=0.0,
                                     stale_retry_s=0.0))
    f.write("Decisions/D0.md", "# D0\n\nchanged under a held lock\n")
    with OtherProcess(f.world.lock):
        packet = f.service.search("held lock")
    assert packet.freshness == "stale"
    assert any("not indexed yet" in w for w in packet.warnings)
    assert f.service.search("held lock").freshness == "refreshed-before-search"


def test_a_stale_verdict_is_reused_for_a_while_instead_of_waiting_again():
    f = Fresh(watch=False, clock=RealTime(), lock_timeout_s=0.05,
              config=FreshnessConfig(search_budget_s=0.3, check_interval_s=0.0,
                                     stale_retry_s=60.0))
    f.write("Decisions/D0.md", "# D0\n\nchanged under a held lock\n")
    with OtherProcess(f.world.lock):
        assert f.service.search("held lock").freshness == "stale"
        tries = f.world.lock.attempts
        packet = f.service.search("held lock")
        assert f.world.lock.attempts == tries  # the verdict is reused: no second wait
    assert packet.freshness == "stale" and packet.warnings


def test_the_watcher_retries_while_another_process_holds_the_lock():
    f = Fresh(watch=True, clock=RealTime(), lock_timeout_s=0.05,
              config=FreshnessConfig(search_budget_s=0.2, background_pause_s=0.05))
    f.policy.start()
    f.write("Decisions/D0.md", "# D0\n\nthe pangolin protocol\n")
    with OtherProcess(f.world.lock):
        burst = threading.Thread(target=f.feed.emit, args=(["Decisions/D0.md"],))
        burst.start()
        time.sleep(0.5)
        assert burst.is_alive()  # still retrying, between tries it holds nothing
    burst.join(10)
    assert not burst.is_alive()
    packet = f.service.search("pangolin protocol")
    assert packet.freshness == "current" and top_path(packet) == "Decisions/D0.md"


def test_an_unreadable_file_is_not_refreshed_again_and_again():
    f = Fresh(watch=False)
    f.world.source.unreadable["Decisions/Broken.md"] = "not valid UTF-8"
    f.clock.now += 2
    f.service.search("anything")
    records = f.records()
    for _ in range(3):
        f.clock.now += 2
        assert f.service.search("anything").freshness == "current"
    assert f.records() == records


@pytest.mark.parametrize("watch", [True, False])
def test_a_deleted_note_disappears_from_results(watch):
    f = Fresh(watch=watch)
    f.policy.start()
    f.world.source.delete("Decisions/D2.md")
    if watch:
        f.feed.emit(["Decisions/D2.md"])
    f.clock.now += 2
    packet = f.service.search("topic2")
    assert "Decisions/D2.md" not in [i.path for i in packet.items]


def test_the_servers_own_refreshes_are_recorded_only_when_they_changed_something():
    history = InMemoryRefreshHistory()
    own = ChangesOnlyHistory(history)
    own.append({"stages": [{"stage": "index", "outcome": "unchanged"}]})
    assert history.records == [] and own.last() is None
    own.append({"stages": [{"stage": "index", "outcome": "published"}]})
    own.append({"stages": [{"stage": "index", "outcome": "kept-last-good"}]})
    assert len(history.records) == 2


def test_a_refresh_that_keeps_the_last_good_index_is_reported_and_not_retried_each_search():
    f = Fresh(watch=False)
    generations = f.world.generations
    original = generations.stage

    def corrupt(base):
        stage = original(base)
        stage._snap.corrupt = True
        return stage

    generations.stage = corrupt
    f.write("Decisions/D1.md", "# D1\n\nan edit validation rejects\n")
    f.clock.now += 2
    packet = f.service.search("validation rejects")
    assert packet.freshness == "stale"
    assert any("kept the last good index" in w for w in packet.warnings)
    records = f.records()
    f.clock.now += 10
    f.service.search("validation rejects")
    assert f.records() == records


def test_when_watching_breaks_down_searches_check_the_root_themselves():
    f = Fresh(watch=True)
    f.policy.start()
    f.feed.failed = True
    assert not f.policy.watching
    f.write("Decisions/D1.md", "# D1\n\nDecision one now says axolotl.\n")
    f.clock.now += 2
    packet = f.service.search("axolotl")
    assert packet.freshness == "refreshed-before-search"
    assert top_path(packet) == "Decisions/D1.md"


# -- no index at all, big notes, the graph ------------------------------------------------

from memory.adapters.inmemory import DeterministicEmbedder, InMemoryRefreshProgress  # noqa: E402
from memory.domain.refresh import BuildProgress  # noqa: E402


def wait_until(condition, timeout: float = 20.0) -> bool:
    """Hang guard for work on the background thread (not a timing assertion)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.01)
    return condition()


@pytest.mark.parametrize("watch", [True, False])
def test_a_deleted_index_is_rebuilt_by_the_next_search_on_a_small_root(watch):
    """`rm -rf .ai-memory` under a running server: no event reaches the watcher."""
    f = Fresh(watch=watch)
    f.policy.start()
    f.forget_index()
    f.clock.now += 2
    packet = f.service.search("topic2")
    assert packet.freshness == "refreshed-before-search"
    assert top_path(packet) == "Decisions/D2.md"


def test_a_big_root_without_an_index_says_it_is_being_built_and_the_background_builds_it():
    f = Fresh(watch=True, clock=RealTime(), config=FreshnessConfig(max_search_files=2))
    f.policy.start()
    f.forget_index()
    packet = f.service.search("topic2")
    assert packet.freshness in ("not-indexed", "refreshed-before-search")  # (the background
    if packet.freshness == "not-indexed":                                  # may be done)
        assert any(w.startswith("index being built:") and "4 notes" in w
                   for w in packet.warnings)
        assert packet.no_answer_reason.startswith("index being built:")
    assert wait_until(lambda: f.world.generations.current() is not None)
    assert top_path(f.service.search("topic2")) == "Decisions/D2.md"
    f.policy.stop()


def test_a_build_in_another_process_is_reported_with_its_progress():
    board = InMemoryRefreshProgress()
    f = Fresh(watch=True, board=board)
    f.policy.start()
    f.forget_index()
    board.post(BuildProgress(stage="index", done=256, total=600, pid=4242))
    packet = f.service.search("topic2")
    assert packet.freshness == "not-indexed"
    assert "index being built: 256 of 600 notes, by process 4242; results are incomplete " \
           "until it is done" in packet.warnings
    board.clear()
    f.clock.now += 2
    assert f.service.search("topic2").freshness == "refreshed-before-search"


class GatedEmbedder(DeterministicEmbedder):
    """Embedding a chunk of the giant note blocks until the test opens the gate."""

    def __init__(self):
        super().__init__()
        self.gate, self.waiting = threading.Event(), threading.Event()

    def embed_documents(self, texts):
        if any("giant" in t for t in texts):
            self.waiting.set()
            self.gate.wait(10)
        return super().embed_documents(texts)


def giant_world(**config):
    f = Fresh(watch=True, clock=RealTime(), embedder=GatedEmbedder(),
              config=FreshnessConfig(big_note_bytes=500, background_pause_s=0.01, **config))
    f.policy.start()
    f.write("Notes/Giant.md", "# Giant\n\n" + "".join(f"giant line {i}\n" for i in range(200)))
    f.feed.emit(["Notes/Giant.md"])  # the small pass leaves it to the background thread
    assert f.world.embedder.waiting.wait(10)  # which is embedding it now
    return f


def test_a_search_does_not_wait_for_a_giant_note_being_indexed():
    # Were the search to wait for the background's run, the gate would stop it for 10 s and
    # it would come back refreshed; it comes back at once, stale, saying why.
    f = giant_world(search_budget_s=30.0)
    packet = f.service.search("topic1")
    assert top_path(packet) == "Decisions/D1.md"
    assert packet.freshness == "stale"
    assert any("still running" in w for w in packet.warnings), packet.warnings
    f.world.embedder.gate.set()
    assert wait_until(lambda: "Notes/Giant.md" in f.world.generations.current().manifest)
    f.policy.stop()


def test_a_small_note_saved_while_a_giant_one_is_indexed_goes_first():
    f = giant_world()
    f.write("Decisions/D1.md", "# D1\n\nthe okapi decision\n")
    burst = threading.Thread(target=f.feed.emit, args=(["Decisions/D1.md"],))
    burst.start()
    # The burst cancels the giant note's run; it stops once its current batch returns.
    assert wait_until(lambda: f.policy._worker._token is None
                      or f.policy._worker._token.cancelled())
    f.world.embedder.gate.set()
    burst.join(20)
    assert not burst.is_alive()
    assert top_path(f.service.search("okapi decision")) == "Decisions/D1.md"
    generations = [g for _, g in sorted(f.world.index.generations.items())]
    first_with_okapi = next(g for g in generations if any(
        "okapi" in c.text for d in g.documents.values() for c in d.chunks))
    assert "Notes/Giant.md" not in first_with_okapi.manifest  # published before the giant
    assert wait_until(lambda: "Notes/Giant.md" in f.world.generations.current().manifest)
    packet = f.service.search("giant line")
    assert packet.freshness == "current" and top_path(packet) == "Notes/Giant.md"
    f.policy.stop()


def test_the_graph_follows_notes_moved_under_the_watcher():
    f = Fresh(watch=True, clock=RealTime(), graph=True,
              config=FreshnessConfig(graph_debounce_s=0.0))
    f.policy.start()
    moved = f.world.source.load("Decisions/D1.md")
    f.world.source.delete("Decisions/D1.md")
    f.world.source.put(make_doc("Archive/D1.md", "\n".join(moved.lines)))
    f.feed.emit(["Decisions/D1.md", "Archive/D1.md"])
    assert wait_until(lambda: f.indexer.graph_lag().behind == 0)
    assert f.service.neighbors("archive/d1").graph_generation == f.world.graph.current().id
    f.policy.stop()


# -- a one-shot command (the CLI): the same step, nothing left running ----------------------

ONE_SHOT = FreshnessConfig(background=False)


def started_a_thread(f: Fresh) -> bool:
    return f.policy._worker._thread is not None


def test_a_one_shot_read_indexes_a_small_edit_before_answering():
    f = Fresh(watch=False, config=ONE_SHOT)
    f.write("Decisions/D1.md", "# D1\n\nDecision one now says quokka.\n")
    packet = f.service.search("quokka")
    assert packet.freshness == "refreshed-before-search"
    assert top_path(packet) == "Decisions/D1.md"
    assert "quokka" in packet.items[0].text


def test_a_one_shot_read_of_a_root_never_indexed_says_not_indexed_and_builds_nothing():
    f = Fresh(watch=False, config=ONE_SHOT)
    f.forget_index()
    packet = f.service.search("topic2")
    assert packet.freshness == "not-indexed" and packet.no_answer
    assert packet.no_answer_reason.startswith("not indexed:")
    assert "memory_refresh" in packet.no_answer_reason
    assert "never mentions" not in packet.no_answer_reason
    assert f.world.generations.current() is None and not started_a_thread(f)
    read = f.service.get("Decisions/D2.md")
    assert read.lines and any(w.startswith("not indexed:") for w in read.warnings)
    assert any(w.startswith("not indexed:") for w in f.service.explain("topic2").warnings)
    assert any(p.startswith("not indexed:") for p in f.service.health().index.problems)


def test_a_name_on_a_root_never_indexed_is_not_indexed_not_a_missing_note():
    f = Fresh(watch=False, config=ONE_SHOT)
    f.forget_index()
    for read in (lambda: f.service.get("D2"),
                 lambda: f.service.feedback("topic2", "D2", "relevant")):
        with pytest.raises(Unavailable) as raised:
            read()
        assert str(raised.value).startswith("not indexed:")
        assert "memory_refresh" in str(raised.value)
    assert f.world.generations.current() is None


def test_a_one_shot_read_leaves_a_big_note_to_refresh_and_says_so():
    f = Fresh(watch=False, config=FreshnessConfig(background=False, big_note_bytes=500))
    f.write("Notes/Giant.md", "# Giant\n\n" + "".join(f"giant line {i}\n" for i in range(200)))
    packet = f.service.search("giant line")
    assert packet.freshness == "stale"
    assert any("Notes/Giant.md" in w and "memory_refresh" in w for w in packet.warnings)
    assert not started_a_thread(f)


def test_a_read_without_any_policy_never_calls_a_missing_index_current():
    w = World(docs())  # never refreshed, no freshness policy: a bare service
    packet = w.service.search("topic2 quagga")
    assert packet.freshness == "not-indexed" and packet.no_answer
    assert packet.no_answer_reason.startswith("not indexed:")
    assert any(x.startswith("not indexed:") for x in w.service.get("Decisions/D1.md").warnings)


def test_a_search_on_an_indexed_root_says_nothing_of_the_index_when_nothing_changed():
    f = Fresh(watch=False, config=ONE_SHOT)
    packet = f.service.search("topic2")
    assert packet.freshness == "current" and top_path(packet) == "Decisions/D2.md"
    assert not f.service.get("Decisions/D2.md").warnings


def test_a_missing_index_the_search_cannot_build_is_not_indexed_and_built_in_the_background():
    f = Fresh(watch=False, clock=RealTime(), config=FreshnessConfig(search_budget_s=0.2))
    f.forget_index()
    f.world.embedder._state = EmbedderState.LOADING  # the model loads longer than the budget
    packet = f.service.search("topic2")
    assert packet.freshness == "not-indexed"
    assert any("not indexed yet" in w and "background" in w for w in packet.warnings)
    f.world.embedder._state = EmbedderState.READY
    assert wait_until(lambda: f.world.generations.current() is not None)
    assert top_path(f.service.search("topic2")) == "Decisions/D2.md"
    f.policy.stop()
