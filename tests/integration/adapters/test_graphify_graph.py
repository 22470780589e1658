"""GraphifyGraph over a graph Graphify really built: proximity, neighbours, paths, reloads."""

from __future__ import annotations

import gc
import textwrap
import weakref
from pathlib import Path

import pytest

from memory.adapters.graphify import GraphifyGenerations, GraphifyGraph
from memory.adapters.graphify import graph as graph_module
from memory.adapters.markdown import MarkdownNoteSource
from memory.domain.errors import NotFound, Unavailable
from memory.ports.graph_provider import GraphProvider

VAULT = {
    "Repos/alpha/_repo.md": "---\nmemory_id: repo-alpha\n---\n# Alpha\nSee [[retry-policy]].\n",
    "Repos/alpha/Notes/retry-policy.md": """\
        ---
        memory_id: retry-policy
        title: Retry Policy
        aliases: [Backoff Rules]
        related: ["[[deploy-checklist]]"]
        supersedes: [retry-old]
        ---
        # Retry policy
        Storm in ALPHA-142.
        """,
    "Repos/alpha/Notes/retry-old.md":
        "---\nmemory_id: retry-old\nsuperseded_by: [retry-policy]\n---\n# Old\n",
    "Decisions/deploy-checklist.md": """\
        ---
        memory_id: deploy-checklist
        title: Deploy Checklist
        ---
        # Deploy checklist
        Check [[Backoff Rules]] and [[rollback]].
        """,
    "Decisions/rollback.md": "---\nmemory_id: rollback\n---\n# Rollback\nSee [[canary]].\n",
    "Decisions/canary.md": "---\nmemory_id: canary\n---\n# Canary\n",
    "Workflows/orphan.md": "# Orphan\nNo links at all.\n",
    # A ticket is an id a note belongs to: the mention in retry-policy links to this one.
    "Repos/alpha/Tickets/ALPHA-142/storm.md": "# Storm\nThe retry storm.\n",
}


def write_vault(root: Path) -> Path:
    for rel, text in VAULT.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


def publish(root: Path, state: Path, limit: int | None = None):
    source = MarkdownNoteSource(root)
    docs = [source.load(p) for p in sorted(source.scan().files)][:limit]
    return GraphifyGenerations(root, state).build(docs).publish()


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    base = tmp_path_factory.mktemp("graphify-graph")
    root, state = write_vault(base / "root"), base / "state"
    publish(root, state)
    return GraphifyGraph(state)


def test_is_a_graph_provider_naming_the_published_generation(graph):
    assert isinstance(graph, GraphProvider)
    info = graph.current()
    assert info is not None and info.notes == len(VAULT)
    assert graph.problems() == []


def test_related_ranks_declared_and_linked_notes_first(graph):
    ranked = graph.related(["retry-policy"], 10)
    ids = [m for m, _ in ranked]
    assert set(ids[:3]) >= {"retry-old", "deploy-checklist"}
    assert ids.index("deploy-checklist") < ids.index("canary")
    assert "workflows/orphan" not in ids
    assert all(a[1] >= b[1] > 0 for a, b in zip(ranked, ranked[1:]))
    assert graph.related(["no-such-note"], 5) == []
    assert graph.related(["retry-policy"], 0) == []
    assert len(graph.related(["retry-policy", "canary"], 2)) == 2


def test_related_answers_the_same_every_time(graph):
    # Its speed is a figure of benchmarks/, not a test.
    first = graph.related(["retry-policy", "rollback", "canary"], 20)
    assert first and all(graph.related(["retry-policy", "rollback", "canary"], 20) == first
                         for _ in range(20))


def test_neighbors_carry_relations_kinds_paths_and_lines(graph):
    found = {n.node: n for n in graph.neighbors("retry-policy", 1)}
    old = found["retry-old"]
    assert (old.kind, old.path, old.depth) == ("note", "Repos/alpha/Notes/retry-old.md", 1)
    assert old.via[0].relation in ("supersedes", "superseded_by")
    related = found["deploy-checklist"].via[0]
    assert (related.source, related.relation, related.target) == \
        ("retry-policy", "related", "deploy-checklist")
    assert (related.source_path, related.source_line) == ("Repos/alpha/Notes/retry-policy.md", 5)
    assert found["repository:alpha"].kind == "repository"
    assert found["ticket:ALPHA-142"].kind == "ticket"
    assert "canary" not in found
    deeper = {n.node: n for n in graph.neighbors("retry-policy", 3)}
    assert deeper["canary"].depth == 3
    assert [r.relation for r in deeper["canary"].via] == ["related", "references", "references"]
    with pytest.raises(NotFound):
        graph.neighbors("no-such-note", 1)


def test_path_keeps_each_hops_relation_and_stored_direction(graph):
    found = graph.path("retry-old", "canary")
    assert found is not None and found.source == "retry-old"
    hops = [(h.source, h.relation, h.target) for h in found.hops]
    assert hops[-1] == ("rollback", "references", "canary")
    assert hops[0][1] in ("supersedes", "superseded_by")
    assert [n["node"] for n in found.nodes][0] == "retry-old"
    assert [n["node"] for n in found.nodes][-1] == "canary"
    assert graph.path("retry-old", "workflows/orphan") is None
    with pytest.raises(NotFound):
        graph.path("retry-old", "no-such-note")


def test_no_graph_means_no_signal_and_a_clear_error(tmp_path):
    graph = GraphifyGraph(tmp_path / "state")
    assert graph.current() is None
    assert graph.related(["retry-policy"], 5) == []
    assert graph.problems()
    with pytest.raises(Unavailable):
        graph.neighbors("retry-policy", 1)


def test_switches_when_another_process_publishes(tmp_path):
    root, state = write_vault(tmp_path / "root"), tmp_path / "state"
    first = publish(root, state, limit=3)
    graph = GraphifyGraph(state)
    assert graph.current().id == first.id
    second = publish(root, state)
    assert graph.current().id == second.id
    assert graph.path("retry-policy", "canary") is not None


def test_a_damaged_graph_file_does_not_crash_and_keeps_the_last_good(tmp_path):
    root, state = write_vault(tmp_path / "root"), tmp_path / "state"
    first = publish(root, state)
    fresh, loaded = GraphifyGraph(state), GraphifyGraph(state)
    assert loaded.current().id == first.id
    second = publish(root, state)
    (state / "graph" / f"gen-{second.id}" / "graph.json").write_text('{"nodes": [', "utf-8")
    assert loaded.current().id == first.id
    assert loaded.neighbors("retry-policy", 1)
    assert any(second.id in p for p in loaded.problems())
    assert fresh.current() is None
    assert fresh.related(["retry-policy"], 5) == []
    assert fresh.problems()
    (state / "graph" / "CURRENT").write_text("garbage that is not an id/", "utf-8")
    assert loaded.current().id == first.id
    assert loaded.problems()


@pytest.fixture
def unfrozen():
    gc.unfreeze()
    yield
    gc.unfreeze()


def test_a_small_graph_is_left_to_the_collector(tmp_path, unfrozen):
    root, state = write_vault(tmp_path / "root"), tmp_path / "state"
    publish(root, state)
    assert GraphifyGraph(state).current() is not None
    assert gc.get_freeze_count() == 0


def test_a_big_graph_is_frozen_and_the_one_it_replaces_is_freed(tmp_path, unfrozen,
                                                                  monkeypatch):
    monkeypatch.setattr(graph_module, "SETTLE_MIN_NODES", 1)  # every graph counts as big
    root, state = write_vault(tmp_path / "root"), tmp_path / "state"
    first = publish(root, state, limit=3)
    graph = GraphifyGraph(state)
    assert graph.current().id == first.id
    assert gc.get_freeze_count() > 0
    old = weakref.ref(graph._snapshot.graph)  # networkx graphs hold reference cycles
    second = publish(root, state)
    assert graph.current().id == second.id
    assert old() is None  # collected before the new graph was frozen, not frozen with it
    assert graph.path("retry-policy", "canary") is not None
