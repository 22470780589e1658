"""Identity is total: notes that want the same id never fail a refresh, each gets an id of
its own, and the ids do not depend on whether the notes arrived in one full rebuild or one
at a time, in any order."""

from __future__ import annotations

import random

import pytest
from builders import World, make_doc

CONTENDERS = [
    make_doc("Repos/api/Deploy.md", "# Deploy\n\nupper deploy steps\n"),
    make_doc("repos/api/deploy.md", "# deploy\n\nlower deploy steps\n"),
    make_doc("Decisions/A.md", "# A\n\napple facts\n", memory_id="same"),
    make_doc("Decisions/B.md", "# B\n\nbanana facts\n", memory_id="same"),
    make_doc("Decisions/C.md", "# C\n\ncherry facts\n", memory_id="repos/api/deploy"),
    make_doc("Decisions/D.md", "# D\n\ndate facts\n", memory_id="decisions/a"),
]


def ids(world: World) -> dict[str, str]:
    return {n.path: n.memory_id for n in world.chunks.notes()}


@pytest.fixture(scope="module")
def rebuilt() -> dict[str, str]:
    world = World(CONTENDERS)
    report = world.refresh("full")
    assert report.ok, report
    found = ids(world)
    assert sorted(found) == sorted(d.note.path for d in CONTENDERS)
    assert len(set(found.values())) == len(CONTENDERS)
    assert world.graph.current().notes == len(CONTENDERS)
    return found


def test_a_full_rebuild_indexes_every_contender_and_names_both_files(rebuilt):
    world = World(CONTENDERS)
    warnings = "\n".join(world.refresh("full").warnings)
    assert "repos/api/deploy.md: memory_id 'repos/api/deploy' is already used by " \
           "Repos/api/Deploy.md" in warnings
    assert "Decisions/B.md: memory_id 'same' is already used by Decisions/A.md" in warnings
    assert rebuilt["Decisions/C.md"] == "decisions/c"  # a path's own id beats a declared one
    assert rebuilt["Decisions/A.md"] == "same"
    assert rebuilt["Decisions/D.md"] == "decisions/a"  # A keeps "same", so its path id is free


@pytest.mark.parametrize("seed", range(12))
def test_one_note_at_a_time_in_any_order_gives_the_rebuilt_ids(rebuilt, seed):
    order = list(CONTENDERS)
    random.Random(seed).shuffle(order)
    world = World()
    for doc in order:
        world.source.put(doc)
        report = world.refresh("index")
        assert report.ok, report
    assert ids(world) == rebuilt
    assert world.refresh("full").ok and ids(world) == rebuilt


def test_the_graph_names_every_contender_by_its_index_id(rebuilt):
    world = World(CONTENDERS)
    assert world.refresh("full").ok
    assert world.graph.paths == {memory_id: path for path, memory_id in rebuilt.items()}
