"""memory_health says when the graph is behind the index (unhealthy when it still has notes that
moved or went), and no answer tells a person to run a refresh while one is building the index;
a reader of a shared index describes that index, not its own root, and a caller refused
writes sees them off."""

import pytest
from builders import World, make_doc

from memory.adapters.inmemory import InMemoryNoteSource, InMemoryRefreshProgress
from memory.application.refresh.verdict import Verdict
from memory.application.service import MemoryService
from memory.domain.errors import Unavailable
from memory.domain.health import READ_ONLY_SERVER, WriteAccess
from memory.domain.refresh import BuildProgress


def docs():
    return [make_doc("Repos/api/Notes/Retry.md", "# Retry\n\nRetry the webhook three times.",
                     memory_id="retry", related=("Timeouts",)),
            make_doc("Repos/api/Notes/Timeouts.md", "# Timeouts\n\nThe gateway cuts at 30 s.",
                     memory_id="timeouts", title="Timeouts")]


def fresh_world() -> World:
    w = World(docs())
    assert w.refresh("full").ok
    return w


def test_a_graph_in_step_with_the_index_is_healthy():
    health = fresh_world().service.health()
    assert health.healthy and health.graph.behind_index == 0
    assert not any("graph behind" in p for p in health.graph.problems)


def test_a_note_moved_since_the_graph_was_built_makes_health_unhealthy():
    w = fresh_world()
    w.source.delete("Repos/api/Notes/Timeouts.md")
    w.source.put(make_doc("Repos/api/Archive/Timeouts.md", "# Timeouts\n\nThe gateway cuts at "
                          "30 s.", memory_id="timeouts", title="Timeouts"))
    assert w.service.refresh("index").ok  # the index follows; the graph does not
    health = w.service.health()
    assert not health.healthy and health.graph.behind_index == 2
    problem = next(p for p in health.graph.problems if "graph behind index" in p)
    assert "moved or were removed" in problem and "mode 'full'" in problem
    assert w.service.refresh("full").ok
    after = w.service.health()
    assert after.healthy and after.graph.behind_index == 0


def test_a_note_only_added_since_the_graph_is_a_warning_not_a_failure():
    w = fresh_world()
    w.source.put(make_doc("Repos/api/Notes/New.md", "# New\n\nA new note on queues.",
                          memory_id="new"))
    assert w.service.refresh("index").ok
    health = w.service.health()
    assert health.healthy and health.graph.behind_index == 1
    assert any("graph behind index by 1 notes" in x and "miss the newest" in x
               for x in health.warnings)
    assert not any("graph behind" in p for p in health.graph.problems)


def building_service(w: World, board: InMemoryRefreshProgress) -> MemoryService:
    def before_search():
        progress = board.read()
        return Verdict.stale(f"{progress.describe()}; results are incomplete until it is done")
    return MemoryService(
        engine=w.engine, indexer=w.indexer, source=w.source, lexical=w.chunks, catalogue=w.chunks,
        index=w.generations, graph=w.graph, graphs=w.graph, embedder=w.embedder,
        feedback=w.feedback, history=w.history, clock=w.clock, before_search=before_search,
        board=board)


def test_while_the_index_is_being_built_nothing_says_run_a_refresh():
    w = World(docs())  # no generation published yet
    board = InMemoryRefreshProgress()
    board.post(BuildProgress(stage="index", done=120, total=400, pid=77))
    service = building_service(w, board)
    packet = service.search("webhook retry")
    assert not any("run memory_refresh" in x for x in packet.warnings), packet.warnings
    assert "index being built: 120 of 400 notes, by process 77; results are incomplete " \
           "until it is done" in packet.warnings
    health = service.health()
    assert not health.healthy
    assert "no index generation yet: index being built: 120 of 400 notes, by process 77" in \
        health.index.problems
    assert not any("run memory_refresh" in x for x in (*health.warnings, *health.index.problems))
    read_warnings = service._generation()[1]
    assert read_warnings == ["index being built: 120 of 400 notes, by process 77; nothing can "
                             "be found until it is done"]


def test_without_a_build_running_the_missing_index_still_says_what_to_do():
    w = World(docs())
    service = building_service(w, InMemoryRefreshProgress())
    assert any("run memory_refresh" in p for p in service.health().index.problems)


def test_a_reader_of_a_shared_index_does_not_diff_a_root_it_never_indexes():
    w = fresh_world()
    unrelated = InMemoryNoteSource([make_doc("Scratch/todo.md", "# Todo\n\nBuy milk.")])
    published = w.generations.current()
    for root in (InMemoryNoteSource(), unrelated):  # empty, or holding other notes
        health = w.reader(root).health()
        assert health.healthy, health
        assert health.index.generation.id == published.id
        assert health.index.files_changed_since is None
        assert not health.index.older_than_sources and health.index.newest_source_change is None
        assert "another process" in health.index.refreshed_by
        assert "ai-memory refresh --root NOTES --store URL" in health.index.refreshed_by
        assert health.last_refresh == {
            "time": published.created, "index_generation": published.id,
            "source": "the store: when its current generation was published"}
        assert not any("run memory_refresh" in x for x in (*health.warnings,
                                                           *health.index.problems))
        assert health.writes == WriteAccess(enabled=False, reason=READ_ONLY_SERVER)


def test_a_reader_with_nothing_published_names_the_indexer_not_memory_refresh():
    w = World(docs())
    health = w.reader().health()
    assert not health.healthy and health.last_refresh is None
    assert any("ai-memory refresh --root NOTES --store URL" in p for p in health.index.problems)
    assert not any("run memory_refresh" in x for x in (*health.warnings, *health.index.problems))


def test_a_server_indexing_its_own_root_still_lists_what_changed_since_the_index():
    w = fresh_world()
    w.source.delete("Repos/api/Notes/Timeouts.md")
    health = w.service.health()
    assert health.index.files_changed_since.removed == 1 and health.index.refreshed_by is None
    assert health.last_refresh == w.history.last()


def test_a_caller_refused_writes_sees_writes_off_with_the_reason():
    w = fresh_world()
    served = WriteAccess.served(read_only=False, git_commit=True)
    service = MemoryService(
        engine=w.engine, indexer=w.indexer, source=w.source, lexical=w.chunks,
        catalogue=w.chunks, index=w.generations, graph=w.graph, graphs=w.graph,
        embedder=w.embedder, feedback=w.feedback, history=w.history, clock=w.clock,
        writes=served)
    assert service.health().writes == served
    assert service.health("this token may only read").writes == WriteAccess(
        enabled=False, reason="this token may only read")
    read_only = WriteAccess.served(read_only=True, git_commit=False)
    assert read_only.refused("this token may only read") == read_only  # the server's reason


def test_a_reader_is_never_told_to_run_memory_refresh_it_refuses():
    """No graph yet, or the graph behind the index: the reader names the indexer's command."""
    w = World(docs())
    assert w.refresh("index").ok  # an index but no graph
    with pytest.raises(Unavailable) as missing:
        w.reader().neighbors("Repos/api/Notes/Retry.md")
    assert "ai-memory refresh --mode full --root NOTES --store URL" in str(missing.value)
    assert "run memory_refresh" not in str(missing.value)
    with pytest.raises(Unavailable) as local:
        w.service.neighbors("Repos/api/Notes/Retry.md")
    assert "run memory_refresh with mode 'full'" in str(local.value)


def test_a_readers_graph_behind_the_index_names_the_indexers_full_refresh():
    w = fresh_world()
    w.source.put(make_doc("Repos/api/Notes/New.md", "# New\n\nA new note on queues.",
                          memory_id="new"))
    w.source.delete("Repos/api/Notes/Timeouts.md")
    assert w.service.refresh("index").ok  # the shared index follows; its graph does not
    health = w.reader().health()
    said = (*health.warnings, *health.graph.problems)
    assert any("moved or were removed" in x for x in said)
    assert all("ai-memory refresh --mode full --root NOTES --store URL" in x
               for x in said if "graph behind" in x)
    assert not any("memory_refresh" in x or "ai-memory serve" in x for x in said)
