"""Capture's index ports over the in-memory stack: one-note refresh, near duplicates, evidence."""

import pytest
from attrs import evolve

from builders import World, edit, make_doc

from memory.adapters.inmemory import DeterministicEmbedder
from memory.application.capture.index import (DuplicatePolicy, IndexCatalogue, IndexedWrites,
                                              IndexNoteEvidence, IndexSimilarNotes, query_text)
from memory.application.refresh.indexer import RefreshPolicy
from memory.domain.model_state import EmbedderState
from memory.domain.placement import ScopeKey, WriteScope
from memory.domain.refresh import ManifestDiff, diff_scan

NOTES = {
    "Repos/api/Notes/retries.md": "# Retries\n\nWebhook deliveries are retried three times "
                                  "with exponential backoff starting at two seconds.\n",
    "Repos/api/Notes/timeouts.md": "# Timeouts\n\nThe gateway cuts requests after thirty "
                                   "seconds; long charges run in a worker.\n",
    "Repos/web/Notes/retries.md": "# Retries\n\nWebhook deliveries are retried three times "
                                  "with exponential backoff starting at two seconds.\n",
    "Decisions/logging.md": "# Logging\n\nAll services log JSON lines to stdout.\n",
}
NEW = "Repos/api/Notes/new.md"


@pytest.fixture
def world():
    w = World([make_doc(p, body, title=body.split("\n")[0][2:]) for p, body in NOTES.items()])
    w.refresh("index")
    return w


def test_refresh_paths_indexes_only_the_named_notes(world):
    world.source.put(make_doc(NEW, "# Idempotency\n\nEvery charge carries a zebra key.\n"))
    world.source.put(edit(world.source.load("Repos/api/Notes/timeouts.md"),
                          "# Timeouts\n\nNow the gateway waits a quokka minute.\n"))
    before = world.embedder.embedded
    report = world.indexer.refresh_paths([NEW])
    stage = report.stage("index")
    assert (report.mode, stage.outcome, stage.added, stage.changed) == ("paths", "published",
                                                                        1, 0)
    assert world.embedder.embedded - before == stage.embedded == 1
    assert world.service.search("zebra key").items[0].path == NEW
    assert world.service.search("quokka minute").no_answer  # the other edit waits its turn


def test_the_manifest_holds_the_stat_the_watcher_sees(world):
    world.source.put(make_doc(NEW, "# Idempotency\n\nEvery charge carries a zebra key.\n"))
    world.indexer.refresh_paths([NEW])
    scanned = world.source.scan().files
    assert diff_scan(world.generations.current().manifest, scanned) == ManifestDiff()
    assert world.refresh("index").stage("index").outcome == "unchanged"


def test_indexing_a_note_as_it_is_publishes_nothing(world):
    current = world.generations.current().id
    stage = world.indexer.refresh_paths(["Repos/api/Notes/retries.md"]).stage("index")
    assert stage.outcome == "unchanged" and world.generations.current().id == current


def test_a_path_no_longer_there_leaves_the_index(world):
    world.source.delete("Repos/api/Notes/timeouts.md")
    stage = world.indexer.refresh_paths(["Repos/api/Notes/timeouts.md"]).stage("index")
    assert stage.outcome == "published" and stage.removed == 1
    assert world.chunks.find("Repos/api/Notes/timeouts.md") == []
    assert len(world.chunks.notes()) == len(NOTES) - 1


def test_a_move_is_the_old_path_out_and_the_new_one_in(world):
    old = world.source.load("Repos/api/Notes/timeouts.md")
    world.source.delete(old.note.path)
    moved = "Repos/api/Notes/old/timeouts.md"
    world.source.put(make_doc(moved, "\n".join(old.lines), memory_id=old.note.memory_id,
                              title=old.note.title))
    stage = world.indexer.refresh_paths([old.note.path, moved]).stage("index")
    assert (stage.added, stage.removed) == (1, 1)
    assert world.chunks.note(old.note.memory_id).path == moved


class LoadingEmbedder(DeterministicEmbedder):
    loading = False

    def wait_ready(self, timeout: float) -> bool:
        return not self.loading

    def state(self) -> EmbedderState:
        return EmbedderState.LOADING if self.loading else EmbedderState.READY


def test_nothing_is_indexed_where_one_note_cannot_be_added_as_the_index_is():
    embedder = LoadingEmbedder()
    w = World([make_doc(p, b) for p, b in NOTES.items()], embedder=embedder)
    assert w.indexer.refresh_paths([NEW]).stage("index").reason.startswith("no index yet")
    w.refresh("index")
    embedder.loading = True
    w.source.put(make_doc(NEW, "# New\n\nA new note.\n"))
    stage = w.indexer.refresh_paths([NEW]).stage("index")
    assert stage.outcome == "skipped" and "embedding model is not ready" in stage.reason
    w.source.chunking = "in-memory-v2"
    embedder.loading = False
    assert "chunked another way" in w.indexer.refresh_paths([NEW]).stage("index").reason
    assert w.chunks.find(NEW) == []


def test_indexed_writes_say_why_a_note_is_not_indexed(world):
    published = []
    writes = IndexedWrites(world.indexer, published=published.append)
    world.source.put(make_doc(NEW, "# New\n\nA new note.\n"))
    assert writes.index_paths([NEW]).indexed and published[-1].stage("index").added == 1
    world.source.chunking = "in-memory-v2"
    outcome = writes.index_paths([NEW])
    assert not outcome.indexed and "chunked another way" in outcome.warnings[0]
    world.indexer.policy = RefreshPolicy(lock_timeout_s=0.0)
    with world.lock.hold(1.0):
        busy = writes.index_paths([NEW])
    assert not busy.indexed and "another refresh is running" in busy.warnings[0]


def test_the_catalogue_finds_notes_as_memory_get_does(world):
    catalogue = IndexCatalogue(world.chunks)
    assert catalogue.find("Repos/api/Notes/retries.md").title == "Retries"
    assert catalogue.find("no such note") is None
    assert sorted(n.path for n in catalogue.titled("  RETRIES ")) == [
        "Repos/api/Notes/retries.md", "Repos/web/Notes/retries.md"]


def similar(world, policy=None):
    return IndexSimilarNotes(world.engine, world.chunks, world.generations, policy)


def test_a_restatement_in_the_same_scope_is_a_near_duplicate(world):
    found = similar(world).similar(
        title="Webhook retry policy", body="# Webhook retry policy\n\nWebhook deliveries are "
        "retried three times, backoff exponential, starting at two seconds.",
        scope=WriteScope.parse(repository="api").key)
    assert [c.path for c in found] == ["Repos/api/Notes/retries.md"]
    assert found[0].reason.startswith("similar text (semantic ")


def test_other_subjects_and_other_scopes_are_not_near_duplicates(world):
    finder = similar(world)
    assert finder.similar(title="Release trains", body="We release every second Tuesday.",
                          scope=WriteScope.parse(repository="api").key) == []
    same_text_elsewhere = finder.likeness(
        title="Retries", body=NOTES["Repos/api/Notes/retries.md"],
        scope=WriteScope.parse(kind="decision").key)
    assert [x.note.path for x in same_text_elsewhere] == ["Decisions/logging.md"]


def test_only_current_notes_count_as_duplicates(world):
    doc = world.source.load("Repos/api/Notes/retries.md")
    world.source.put(evolve(doc, note=evolve(doc.note, superseded_by=("api-retries-v2",))))
    world.refresh("index")
    assert similar(world).similar(title="Retries", body=NOTES["Repos/api/Notes/retries.md"],
                                  scope=ScopeKey.of_path("Repos/api/Notes/x.md")) == []


def test_the_policy_needs_both_signals(world):
    strict = DuplicatePolicy(min_cosine=1.01)
    assert similar(world, strict).similar(
        title="Retries", body=NOTES["Repos/api/Notes/retries.md"],
        scope=WriteScope.parse(repository="api").key) == []


def test_the_query_is_the_title_then_the_start_of_the_body():
    text = query_text("Retries", "# Retries\n\nLine one.\n\nLine   two." + " x" * 500, 30)
    assert text == "Retries\nLine one. Line two. x x x x x"


def test_evidence_is_the_notes_chunks_redacted(world):
    secret = "# Keys\n\nThe old deploy used password: hunter2hunter2 on the box.\n"
    world.source.put(make_doc("Repos/api/Notes/keys.md", secret, title="Keys"))
    world.refresh("index")
    items = IndexNoteEvidence(world.chunks, world.generations).items("Repos/api/Notes/keys.md")
    assert [i.citation for i in items] == ["Repos/api/Notes/keys.md:L1-L3"]
    assert "hunter2" not in items[0].text and "[REDACTED" in items[0].text
    assert IndexNoteEvidence(world.chunks, world.generations).items("nowhere.md") == ()
