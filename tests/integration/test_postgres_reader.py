"""A read-only server of a shared Postgres store reads what the indexer published: its own
root (on another host, empty) is never indexed over the shared index."""

from __future__ import annotations

from memory.entrypoints.container import build
from memory.entrypoints.settings import Settings

NOTES = {
    "Decisions/retry.md": "---\nmemory_id: retry\n---\n# Retry\nBack off exponentially.\n",
    "Decisions/deploy.md": "---\nmemory_id: deploy\n---\n# Deploy\nRoll back first.\n",
}


def test_a_read_only_server_never_indexes_its_own_empty_root_over_the_shared_index(
        tmp_path, test_postgres):
    url = test_postgres.fresh()
    notes = tmp_path / "notes"
    for rel, text in NOTES.items():
        (notes / rel).parent.mkdir(parents=True, exist_ok=True)
        (notes / rel).write_text(text, encoding="utf-8")
    indexer = build(Settings.resolve(str(notes), state_dir=str(tmp_path / "indexer-state"),
                                     watch=False, store=url))
    published = indexer.use_cases.service().refresh("index").stage("index").generation
    elsewhere = tmp_path / "no-checkout"
    elsewhere.mkdir()
    server = build(Settings.resolve(str(elsewhere), state_dir=str(tmp_path / "server-state"),
                                    read_only=True, store=url), serving=True)
    packet = server.use_cases.service().search("back off exponentially")
    assert [item.path for item in packet.items][:1] == ["Decisions/retry.md"]
    assert packet.generation.index == published
    assert {n.path for n in server.gateways.catalogue().notes()} == set(NOTES)
