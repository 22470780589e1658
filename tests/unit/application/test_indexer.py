"""Refresh on in-memory adapters: incremental embedding, validation, keep last good."""

import pytest
from attrs import evolve

from builders import World, edit, make_doc

from memory.adapters.inmemory import DeterministicEmbedder
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
    assert stage.outcome == "published" and stage.added == 5, stage
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
    assert stage.outcome == "published" and stage.added == 5 and stage.embedded == 5
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
    w.embedder._state = "failed: no model"
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
