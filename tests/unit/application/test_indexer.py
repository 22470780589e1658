"""Refresh on in-memory adapters: incremental embedding, validation, keep last good."""

import pytest
from attrs import evolve

from builders import World, edit, make_doc

from memory.adapters.inmemory import DeterministicEmbedder
from memory.domain.model_state import EmbedderState
from memory.domain.errors import InvalidRequest
from memory.domain.reading import NoteLine


def docs():
    return [make_doc(f"Decisions/D{i}.md", f"# D{i}\n\nDecision number {i} about topic{i}.\n")
            for i in range(5)]


def test_first_refresh_publishes_and_second_is_unchanged():
    w = World(docs())
    first = w.refresh("index")
    assert first.stage("index").outcome == "published"
    assert first.stage("index").added == 5
    second = w.refresh("index")
    assert second.stage("index").outcome == "unchanged"
    assert w.generations.current().id == first.stage("index").generation


def test_editing_one_note_embeds_only_its_changed_chunks():
    w = World(docs())
    w.refresh("index")
    before = w.embedder.embedded
    w.source.put(edit(w.source.load("Decisions/D2.md"), "# D2\n\nDecision two was reversed.\n"))
    report = w.refresh("index")
    stage = report.stage("index")
    assert stage.outcome == "published" and stage.changed == 1
    assert w.embedder.embedded - before == stage.embedded == 1
    assert w.service.search("reversed").items[0].path == "Decisions/D2.md"


def test_a_change_of_chunking_rebuilds_the_index_from_the_notes():
    """Chunk boundaries or context changed (a new version): an index refresh must not keep
    the old chunks of notes that did not change."""
    w = World(docs())
    first = w.refresh("index").stage("index")
    assert w.generations.current().chunking == w.source.chunking
    assert w.refresh("index").stage("index").outcome == "unchanged"
    w.source.chunking = "in-memory-v2"
    report = w.refresh("index")
    stage = report.stage("index")
    # Every note was re-read and re-chunked, none changed: the counts say what changed.
    assert stage.outcome == "published" and (stage.added, stage.changed, stage.removed) == \
        (0, 0, 0), stage
    assert any("chunking changed (in-memory-v1 -> in-memory-v2)" in x for x in report.warnings)
    assert w.generations.current().chunking == "in-memory-v2"
    assert w.refresh("index").stage("index").outcome == "unchanged"
    assert first.generation != stage.generation


class RenamedEmbedder(DeterministicEmbedder):
    """The same vectors under another model id (as int8 and fp32 MiniLM nearly are)."""

    name = "deterministic-hash-64"

    @property
    def model_id(self) -> str:
        return self.name


def test_a_change_of_model_warns_searches_then_reembeds_everything():
    embedder = RenamedEmbedder()
    w = World(docs(), embedder=embedder)
    w.refresh("full")
    assert not w.service.search("decision").warnings
    embedder.name = "deterministic-hash-64+int8"
    warned = w.service.search("decision").warnings
    assert any("vectors come from deterministic-hash-64 and queries are embedded by "
               "deterministic-hash-64+int8" in x for x in warned), warned
    assert any("deterministic-hash-64+int8" in x for x in w.service.health().warnings)
    before = embedder.embedded
    report = w.refresh("index")
    stage = report.stage("index")
    assert stage.outcome == "published" and stage.added == 0 and stage.embedded == 5
    assert embedder.embedded - before == 5
    assert any("embedding model changed (deterministic-hash-64 -> deterministic-hash-64+int8)"
               in x for x in report.warnings), report.warnings
    assert w.generations.current().model_id == "deterministic-hash-64+int8"
    assert not w.service.search("decision").warnings
    assert w.refresh("index").stage("index").outcome == "unchanged"


def test_removed_note_disappears():
    w = World(docs())
    w.refresh("index")
    w.source.delete("Decisions/D3.md")
    report = w.refresh("index")
    assert report.stage("index").removed == 1
    assert all(i.path != "Decisions/D3.md" for i in w.service.search("topic3").items)


def test_failing_validation_keeps_the_previous_generation():
    w = World(docs())
    good = w.refresh("index").stage("index").generation
    original_stage = w.generations.stage

    def corrupt_stage(base):
        stage = original_stage(base)
        stage._snap.corrupt = True
        return stage

    w.generations.stage = corrupt_stage
    w.source.put(edit(w.source.load("Decisions/D1.md"), "# D1\n\nchanged text\n"))
    report = w.refresh("index")
    assert report.stage("index").outcome == "kept-last-good"
    assert "integrity" in report.stage("index").reason
    assert w.generations.current().id == good
    assert w.generations.stages[-1].discarded
    assert w.service.search("topic1").items[0].path == "Decisions/D1.md"


def test_unreadable_note_is_skipped_with_a_warning_and_others_indexed():
    w = World(docs())
    w.source.unreadable["Decisions/binary.md"] = "binary file"
    report = w.refresh("index")
    assert report.ok
    assert any("Decisions/binary.md" in x for x in report.warnings)
    assert w.generations.current().notes == 5


def test_duplicate_memory_id_is_indexed_under_its_path():
    a = make_doc("Decisions/A.md", "# A\n\napple facts\n", memory_id="same")
    b = make_doc("Decisions/B.md", "# B\n\nbanana facts\n", memory_id="same")
    w = World([a, b])
    report = w.refresh("index")
    assert report.ok
    assert any("already used" in x for x in report.warnings)
    assert {n.memory_id for n in w.chunks.notes()} == {"same", "decisions/b"}


def test_model_unavailable_builds_lexical_index_and_search_warns():
    w = World(docs())
    w.embedder._state, w.embedder._failure = EmbedderState.FAILED, "no model"
    report = w.refresh("index")
    assert report.ok and any("semantic search is off" in x for x in report.warnings)
    packet = w.service.search("topic2")
    assert packet.items[0].path == "Decisions/D2.md"
    assert any("semantic search unavailable" in x for x in packet.warnings)


def test_full_refresh_builds_graph_and_failed_graph_validation_keeps_last_good():
    w = World(docs())
    first = w.refresh("full")
    assert first.stage("graph").outcome == "published"
    w.graph.fail_next_build = True
    second = w.refresh("full")
    assert second.stage("graph").outcome == "kept-last-good"
    assert w.graph.current().id == first.stage("graph").generation


def test_bad_mode_is_refused():
    w = World(docs())
    with pytest.raises(InvalidRequest):
        w.service.refresh("everything")


def test_feedback_and_health_and_get():
    w = World(docs())
    w.refresh("full")
    rec = w.service.feedback("topic2", "decisions/d2", "relevant", "spot on")
    assert rec.recorded and w.feedback.records[0]["generation"]["index"]
    with pytest.raises(InvalidRequest):
        w.service.feedback("topic2", "decisions/d2", "meh")
    health = w.service.health()
    assert health.healthy and health.self_check.ok
    got = w.service.get("Decisions/D2.md", start_line=3, end_line=3)
    assert got.lines == (NoteLine(line=3, text="Decision number 2 about topic2."),)
    with pytest.raises(InvalidRequest):
        w.service.get("../../etc/passwd")


# -- cancellation, the graph stage's discipline, failures named ---------------------------

from memory.adapters.inmemory import InMemoryRefreshProgress  # noqa: E402
from memory.application.refresh.indexer import Indexer, RefreshPolicy  # noqa: E402
from memory.domain.cancellation import CancelToken, Cancelled  # noqa: E402
from memory.ports.errors import StoreError  # noqa: E402


def many_docs(n=12):
    return [make_doc(f"Notes/N{i}.md", f"# N{i}\n\nnote {i} about subject{i}.\n") for i in range(n)]


def small_batches(w, board=None):
    """An indexer embedding one note per batch, so a cancel has steps to land between."""
    return Indexer(w.source, w.generations, w.embedder, w.cache, w.lock, w.clock, w.history,
                   w.graph, policy=RefreshPolicy(embed_batch=1), board=board)


class CancelAt:
    """Progress that cancels the refresh at one step, and records every step it saw."""

    def __init__(self, stage, done):
        self.at, self.token, self.seen = (stage, done), CancelToken(), []

    def __call__(self, stage, done, total):
        self.seen.append((stage, done, total))
        if (stage, done) == self.at:
            self.token.cancel("the client cancelled")


def test_a_cancelled_refresh_stops_between_batches_and_keeps_the_last_good_index():
    w = World(many_docs(3))
    good = w.refresh("index").stage("index").generation
    for i in range(3, 12):
        w.source.put(make_doc(f"Notes/N{i}.md", f"# N{i}\n\nnote {i} about subject{i}.\n"))
    board = InMemoryRefreshProgress()
    indexer, cancel = small_batches(w, board), CancelAt("index", 2)
    with pytest.raises(Cancelled, match="the client cancelled"):
        indexer.refresh("index", progress=cancel, cancel=cancel.token)
    assert cancel.seen[-1] == ("index", 2, 9)  # no step (and no progress) after the cancel
    assert w.embedder.embedded - 3 == 2  # two of nine new notes embedded, then it stopped
    assert w.generations.current().id == good
    assert w.generations.stages[-1].discarded and not w.generations.stages[-1].published
    assert board.read() is None  # nothing reads as "still building"
    assert w.lock.acquired == 2 and w.lock._lock.acquire(blocking=False)  # lock released
    w.lock._lock.release()
    assert w.refresh("index").stage("index").outcome == "published"  # and free to run again


def test_a_cancel_during_the_graph_build_keeps_both_last_good_generations():
    w = World(many_docs(3))
    first = w.refresh("full")
    w.source.put(make_doc("Notes/New.md", "# New\n\nnew note.\n"))
    cancel = CancelAt("graph", 0)
    with pytest.raises(Cancelled):
        w.indexer.refresh("full", progress=cancel, cancel=cancel.token)
    assert [s for s, *_ in cancel.seen] == ["graph"]  # the index stage never started
    assert w.graph.current().id == first.stage("graph").generation
    assert w.generations.current().id == first.stage("index").generation


class FailingGraph:
    """Wraps the in-memory graph so that its stage's facts() or publish() fails."""

    def __init__(self, graph, fail):
        self._graph, self._fail, self.stages = graph, fail, []

    def __getattr__(self, name):
        return getattr(self._graph, name)

    def build(self, documents, cancel=None):
        stage = self._graph.build(documents, cancel)
        stage.discarded = False

        def fail(*args):
            raise StoreError(f"disk full while {self._fail}")

        def discard():
            stage.discarded = True

        setattr(stage, self._fail, fail)
        stage.discard = discard
        self.stages.append(stage)
        return stage


@pytest.mark.parametrize("fail", ["facts", "publish"])
def test_a_store_error_in_the_graph_stage_discards_it_and_the_index_still_refreshes(fail):
    w = World(many_docs(3))
    first = w.refresh("full")
    graphs = FailingGraph(w.graph, fail)
    indexer = Indexer(w.source, w.generations, w.embedder, w.cache, w.lock, w.clock, w.history,
                      graphs)
    w.source.put(make_doc("Notes/New.md", "# New\n\nnew note about quokkas.\n"))
    report = indexer.refresh("full")
    graph = report.stage("graph")
    assert graph.outcome == "kept-last-good" and f"disk full while {fail}" in graph.reason
    assert graph.generation == first.stage("graph").generation
    assert graphs.stages[-1].discarded
    assert report.stage("index").outcome == "published"
    assert w.service.search("quokkas").items[0].path == "Notes/New.md"


def test_held_back_notes_keep_what_the_index_had_and_new_ones_wait():
    w = World(many_docs(3))
    w.refresh("index")
    w.source.put(edit(w.source.load("Notes/N1.md"), "# N1\n\nnow about wombats.\n"))
    w.source.put(make_doc("Notes/Giant.md", "# Giant\n\nthe giant note on capybaras.\n"))
    w.source.put(make_doc("Notes/Small.md", "# Small\n\nthe small note on axolotls.\n"))
    report = w.indexer.refresh("index", hold_back={"Notes/N1.md", "Notes/Giant.md"})
    assert report.stage("index").added == 1  # only Small
    assert [i.path for i in w.service.search("axolotls").items][:1] == ["Notes/Small.md"]
    assert "Notes/Giant.md" not in [i.path for i in w.service.search("capybaras").items]
    assert w.service.search("subject1").items[0].path == "Notes/N1.md"  # the old text
    later = w.indexer.refresh("index")
    assert later.stage("index").added == 1 and later.stage("index").changed == 1
    assert w.service.search("wombats").items[0].path == "Notes/N1.md"


class ReadOnlyStage:
    """Generations whose stages fail to be written, as on a read-only state folder."""

    def __init__(self, generations):
        self._generations = generations

    def __getattr__(self, name):
        return getattr(self._generations, name)

    def stage(self, base):
        raise PermissionError(13, "Permission denied", "/state/index/staging/g2.sqlite")


def test_an_unwritable_state_folder_is_a_store_error_naming_the_file():
    w = World(many_docs(3))
    w.refresh("index")
    w.source.put(make_doc("Notes/New.md", "# New\n\nnew.\n"))
    indexer = Indexer(w.source, ReadOnlyStage(w.generations), w.embedder, w.cache, w.lock,
                      w.clock, w.history)
    with pytest.raises(StoreError, match="Permission denied: '/state/index/staging/g2.sqlite'"):
        indexer.refresh("index")
    assert w.lock._lock.acquire(blocking=False)  # released
    w.lock._lock.release()


class UnwritableHistory:
    def append(self, record):
        raise StoreError("cannot append to /state/refresh-history.jsonl: Read-only file system")

    def last(self):
        return None


def test_a_refresh_whose_record_cannot_be_written_is_done_and_says_so():
    w = World(many_docs(3))
    indexer = Indexer(w.source, w.generations, w.embedder, w.cache, w.lock, w.clock,
                      UnwritableHistory())
    report = indexer.refresh("index")
    assert report.ok and report.stage("index").outcome == "published"
    assert any("refresh not recorded" in x and "Read-only" in x for x in report.warnings)


def test_the_board_shows_the_refresh_while_it_runs_and_nothing_after():
    w = World(many_docs(4))
    board = InMemoryRefreshProgress()
    seen = []
    small_batches(w, board).refresh("index", progress=lambda *step: seen.append(board.read()))
    assert [(p.stage, p.done, p.total) for p in seen] == [("index", i, 4) for i in range(5)]
    assert seen[1].describe() == "index being built: 1 of 4 notes"
    assert board.read() is None


def test_graph_lag_counts_notes_the_graph_does_not_follow_yet():
    w = World(many_docs(4))
    assert w.indexer.graph_lag() is None  # no graph to compare
    w.refresh("full")
    assert w.indexer.graph_lag().behind == 0
    moved = w.source.load("Notes/N2.md")
    w.source.delete("Notes/N2.md")
    w.source.put(make_doc("Archive/N2.md", "\n".join(moved.lines)))
    w.source.put(edit(w.source.load("Notes/N3.md"), "# N3\n\nrewritten.\n"))
    w.refresh("index")
    lag = w.indexer.graph_lag()
    assert (lag.added, lag.removed, lag.changed) == (("Archive/N2.md",), ("Notes/N2.md",),
                                                     ("Notes/N3.md",))
    assert lag.moved and lag.describe().startswith("graph behind index by 3 notes")
    w.indexer.refresh_graph()
    assert w.indexer.graph_lag().behind == 0


def test_a_root_emptied_of_notes_keeps_the_index_until_forced():
    w = World(docs())
    good = w.refresh("index").stage("index").generation
    for i in range(5):
        w.source.delete(f"Decisions/D{i}.md")
    kept = w.refresh("index").stage("index")
    assert kept.outcome == "kept-last-good" and "the root holds no notes" in kept.reason
    assert w.generations.current().id == good
    assert w.service.search("topic3").items[0].path == "Decisions/D3.md"
    forced = w.service.refresh("index", force=True).stage("index")
    assert forced.outcome == "published" and forced.removed == 5
    assert w.service.search("topic3").items == ()


def many(n: int):
    return [make_doc(f"Decisions/M{i}.md", f"# M{i}\n\nDecision {i} about subject{i}.\n")
            for i in range(n)]


def test_a_root_that_lost_most_of_its_notes_at_once_keeps_the_index_until_forced():
    w = World(many(30))
    good = w.refresh("index").stage("index").generation
    for i in range(16):  # a folder not mounted: 16 of 30 gone, 14 left
        w.source.delete(f"Decisions/M{i}.md")
    kept = w.refresh("index").stage("index")
    assert kept.outcome == "kept-last-good" and "shrink" in kept.reason
    assert "the root holds 14 notes and the index held 30" in kept.reason
    assert w.generations.current().id == good
    assert w.service.search("subject3").items[0].path == "Decisions/M3.md"
    assert w.refresh("full").stage("index").outcome == "kept-last-good"  # a rebuild too
    forced = w.service.refresh("index", force=True).stage("index")
    assert forced.outcome == "published" and forced.removed == 16


def test_losing_fewer_notes_or_moving_them_is_an_ordinary_refresh():
    w = World(many(30))
    assert w.refresh("index").ok
    for i in range(14):  # under half
        w.source.delete(f"Decisions/M{i}.md")
    assert w.refresh("index").stage("index").outcome == "published"
    small = World(docs())
    assert small.refresh("index").ok
    for i in range(4):  # most of a small root: fewer than ten notes
        small.source.delete(f"Decisions/D{i}.md")
    assert small.refresh("index").stage("index").outcome == "published"
    moved = World(many(30))
    assert moved.refresh("index").ok
    for i in range(30):  # every note to another folder: as many notes as before
        doc = moved.source.load(f"Decisions/M{i}.md")
        moved.source.delete(f"Decisions/M{i}.md")
        moved.source.put(make_doc(f"Archive/M{i}.md", "\n".join(doc.lines)))
    assert moved.refresh("index").stage("index").outcome == "published"


def test_the_graph_and_the_index_judge_a_shrink_alike():
    small = World(docs())
    assert small.refresh("full").ok
    for i in range(4):  # most of a small root: both follow (the graph used to stay behind)
        small.source.delete(f"Decisions/D{i}.md")
    report = small.refresh("full")
    assert [report.stage(s).outcome for s in ("graph", "index")] == ["published", "published"]
    big = World(many(30))
    assert big.refresh("full").ok
    for i in range(16):
        big.source.delete(f"Decisions/M{i}.md")
    report = big.refresh("full")
    assert [report.stage(s).outcome for s in ("graph", "index")] == ["kept-last-good"] * 2
    assert all("held 30" in report.stage(s).reason for s in ("graph", "index"))


def test_a_full_refresh_counts_the_notes_it_changed_not_the_notes_it_re_read():
    w = World(docs())
    first = w.refresh("full").stage("index")
    assert (first.added, first.changed, first.removed) == (5, 0, 0)  # a first build adds all
    again = w.refresh("full").stage("index")
    assert again.outcome == "published" and (again.added, again.changed, again.removed) == \
        (0, 0, 0)
    w.source.delete("Decisions/D3.md")
    w.source.put(edit(w.source.load("Decisions/D1.md"), "# D1\n\nnow about wombats.\n"))
    w.source.put(make_doc("Decisions/D9.md", "# D9\n\nDecision nine.\n"))
    moved = w.refresh("full").stage("index")
    assert (moved.added, moved.changed, moved.removed) == (1, 1, 1)
    forced = w.service.refresh("index", force=True).stage("index")
    assert forced.outcome == "published" and (forced.added, forced.changed,
                                              forced.removed) == (0, 0, 0)
