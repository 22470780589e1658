"""A read-only server of a shared Postgres store reads what the indexer published: its own
root (on another host, empty) is never indexed over the shared index, nor compared with it
by memory_health; `serve --read-only` without a store indexes (and compares) its own root."""

from __future__ import annotations

import os
import time

from memory.entrypoints.container import build
from memory.entrypoints.settings import Settings

NOTES = {
    "Decisions/retry.md": "---\nmemory_id: retry\n---\n# Retry\nBack off exponentially.\n",
    "Decisions/deploy.md": "---\nmemory_id: deploy\n---\n# Deploy\nRoll back first.\n",
}


def publish(tmp_path, url: str) -> str:
    """Index NOTES into the store as the indexer next to the notes does; the generation id."""
    notes = tmp_path / "notes"
    for rel, text in NOTES.items():
        (notes / rel).parent.mkdir(parents=True, exist_ok=True)
        (notes / rel).write_text(text, encoding="utf-8")
    indexer = build(Settings.resolve(str(notes), state_dir=str(tmp_path / "indexer-state"),
                                     watch=False, store=url))
    return indexer.use_cases.service().refresh("index").stage("index").generation


def reader(tmp_path, url: str, root_name: str = "no-checkout"):
    elsewhere = tmp_path / root_name
    elsewhere.mkdir(exist_ok=True)
    return build(Settings.resolve(str(elsewhere), state_dir=str(tmp_path / "server-state"),
                                  read_only=True, store=url), serving=True)


def test_a_read_only_server_never_indexes_its_own_empty_root_over_the_shared_index(
        tmp_path, test_postgres):
    url = test_postgres.fresh()
    published = publish(tmp_path, url)
    server = reader(tmp_path, url)
    packet = server.use_cases.service().search("back off exponentially")
    assert [item.path for item in packet.items][:1] == ["Decisions/retry.md"]
    assert packet.generation.index == published
    assert {n.path for n in server.gateways.catalogue().notes()} == set(NOTES)


def test_a_readers_health_describes_the_shared_index_not_its_own_root(tmp_path,
                                                                        test_postgres):
    url = test_postgres.fresh()
    published = publish(tmp_path, url)
    other = tmp_path / "other-notes"
    (other / "Scratch").mkdir(parents=True)
    later = other / "Scratch" / "todo.md"
    later.write_text("# Todo\n\nNothing about retries.\n", encoding="utf-8")
    future = time.time() + 3600  # edited well after the generation was published
    os.utime(later, (future, future))
    for root in ("no-checkout", "other-notes"):  # an empty root, or one of unrelated notes
        health = reader(tmp_path, url, root).use_cases.service().health()
        index = health.index
        assert health.healthy, health
        assert index.generation.id == published
        assert index.files_changed_since is None, index.files_changed_since
        assert not index.older_than_sources and index.newest_source_change is None
        assert "ai-memory refresh --root NOTES --store URL" in index.refreshed_by
        assert not any("memory_refresh" in w for w in health.warnings), health.warnings
        assert health.last_refresh["time"] == index.generation.created
        assert health.last_refresh["index_generation"] == published
        assert not health.writes.enabled and "--read-only" in health.writes.reason


def test_read_only_without_a_store_indexes_its_own_root_and_health_compares_it(tmp_path):
    notes = tmp_path / "notes"
    for rel, text in NOTES.items():
        (notes / rel).parent.mkdir(parents=True, exist_ok=True)
        (notes / rel).write_text(text, encoding="utf-8")
    server = build(Settings.resolve(str(notes), state_dir=str(tmp_path / "state"), watch=False,
                                    read_only=True), serving=True)
    service = server.use_cases.service()
    assert service.refresh("index").ok  # its own root: nothing else publishes its index
    (notes / "Decisions" / "new.md").write_text("# New\n\nAdded since.\n", encoding="utf-8")
    health = service.health()
    assert health.index.refreshed_by is None
    assert health.index.files_changed_since.added == 1
    assert health.last_refresh["index_generation"] == health.index.generation.id


def test_another_root_with_a_fraction_of_the_notes_does_not_replace_the_shared_index(
        tmp_path, test_postgres):
    """A teammate's `refresh --store` (or a server started without --read-only) from a root
    holding a fraction of the team's notes keeps the shared index unless forced."""
    url = test_postgres.fresh()
    team = tmp_path / "team-notes"
    for i in range(24):
        (team / "Decisions").mkdir(parents=True, exist_ok=True)
        (team / "Decisions" / f"d{i}.md").write_text(f"# D{i}\n\nDecision {i} on topic{i}.\n",
                                                     encoding="utf-8")
    indexer = build(Settings.resolve(str(team), state_dir=str(tmp_path / "team-state"),
                                     watch=False, store=url))
    published = indexer.use_cases.service().refresh("index").stage("index").generation
    mine = tmp_path / "my-notes"
    (mine / "Scratch").mkdir(parents=True)
    (mine / "Scratch" / "todo.md").write_text("# Todo\n\nMy own list.\n", encoding="utf-8")
    teammate = build(Settings.resolve(str(mine), state_dir=str(tmp_path / "my-state"),
                                      watch=False, store=url)).use_cases.service()
    stage = teammate.refresh("full").stage("index")
    assert stage.outcome == "kept-last-good" and "the index held 24" in stage.reason
    assert teammate.search("topic7").items[0].path == "Decisions/d7.md"
    assert indexer.gateways.index().current().id == published
