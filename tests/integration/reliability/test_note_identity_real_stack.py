"""Identity is total on the real stack (files, SQLite, Graphify): notes whose paths differ
only in case, and notes declaring an id another note's path gives, never make the index
unbuildable; every note gets an id of its own, the same whether the notes arrive one refresh
at a time in either order or in one cold rebuild after `.ai-memory` is deleted."""

from __future__ import annotations

import shutil
import sys

import pytest
from live_root import LiveRoot

NOTES = {
    "Repos/api/Deploy.md": "# Deploy\n\nupperdeploytoken steps\n",
    "repos/api/deploy.md": "# deploy\n\nlowerdeploytoken steps\n",
    "Decisions/Rollback.md": "---\nmemory_id: repos/api/deploy\n---\n# Rollback\n\nrollbacktoken\n",
    "Decisions/Twin A.md": "---\nmemory_id: twin\n---\n# Twin A\n\ntwinatoken\n",
    "Decisions/Twin B.md": "---\nmemory_id: twin\n---\n# Twin B\n\ntwinbtoken\n",
}

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="case twins need a Linux disk")


def ids_of(service) -> dict[str, str]:
    return {n.path: n.memory_id for n in service._catalogue.notes()}


def one_at_a_time(base, embedder, order: list[str]) -> dict[str, str]:
    root = LiveRoot.create(base, {})
    service = root.service(embedder)
    for rel in order:
        root.write(rel, NOTES[rel])
        report = service.refresh("index")
        assert report.ok, report
    return ids_of(service)


@pytest.fixture(scope="module")
def cold(tmp_path_factory, embedder) -> dict[str, str]:
    root = LiveRoot.create(tmp_path_factory.mktemp("cold") / "memory", NOTES)
    assert root.refresh("full")["ok"]
    shutil.rmtree(root.state)  # deleting the derived state loses nothing
    report = root.refresh("full")
    assert report["ok"], report
    warnings = "\n".join(report["warnings"])
    assert "repos/api/deploy.md: memory_id 'repos/api/deploy' is already used by " \
           "Repos/api/Deploy.md" in warnings
    assert "Decisions/Twin B.md: memory_id 'twin' is already used by Decisions/Twin A.md" \
        in warnings
    assert root.graph_problems() == [] and root.index_problems() == []
    found = ids_of(root.service(embedder))
    assert sorted(found) == sorted(NOTES) and len(set(found.values())) == len(NOTES)
    return found


def test_a_cold_rebuild_gives_every_note_an_id_of_its_own(cold):
    assert cold["Repos/api/Deploy.md"] == "repos/api/deploy"
    assert cold["Decisions/Rollback.md"] == "decisions/rollback"
    assert cold["Decisions/Twin A.md"] == "twin" and cold["Decisions/Twin B.md"] == "decisions/twin b"


@pytest.mark.parametrize("order", [sorted(NOTES), sorted(NOTES, reverse=True)],
                         ids=["sorted", "reversed"])
def test_one_note_per_refresh_in_either_order_gives_the_cold_ids(tmp_path, embedder, cold, order):
    assert one_at_a_time(tmp_path / "memory", embedder, order) == cold


def test_every_contender_is_found_and_read_by_its_id(tmp_path, embedder, cold):
    root = LiveRoot.create(tmp_path / "memory", NOTES)
    service = root.service(embedder)
    assert service.refresh("full").ok
    for path, memory_id in cold.items():
        token = NOTES[path].rsplit("\n\n", 1)[-1].split()[0]
        assert [i.path for i in service.search(token, limit=3).items][:1] == [path], token
        assert service.get(memory_id).path == path
        assert service.neighbors(memory_id).path == path
