"""GraphifyGenerations: a cancelled build ends its child processes and leaves nothing; the
current graph says what it was built from."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from processes import graph_workers
from test_graphify_generations import documents, write_vault

from memory.adapters.graphify import GraphifyGenerations
from memory.domain.cancellation import CancelToken, Cancelled
from memory.ports.errors import StoreError


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="finds the child processes in /proc")
def test_a_cancelled_build_kills_its_children_and_leaves_no_stage(tmp_path):
    root, state = write_vault(tmp_path / "root"), tmp_path / "state"
    gens = GraphifyGenerations(root, state)
    cancel, running = CancelToken(), threading.Event()

    def cancel_once_the_child_runs():
        while not graph_workers(state):  # the child is up: the cancel lands mid-build
            if running.wait(0.01):
                return
        cancel.cancel("stopped by the test")

    watcher = threading.Thread(target=cancel_once_the_child_runs)
    watcher.start()
    try:
        with pytest.raises(Cancelled, match="stopped by the test"):
            gens.build(documents(root), cancel)
    finally:
        running.set()
        watcher.join()
    assert graph_workers(state) == []
    assert list((state / "graph" / "staging").iterdir()) == []
    assert gens.current() is None and gens.current_sources() is None


def test_the_current_graph_records_the_notes_it_was_built_from(tmp_path):
    root, state = write_vault(tmp_path / "root"), tmp_path / "state"
    gens = GraphifyGenerations(root, state)
    docs = documents(root)
    info = gens.build(docs).publish()
    assert gens.current().id == info.id and gens.current().notes == info.notes
    assert gens.current_sources() == {d.note.path: d.note.content_hash for d in docs}
    (state / "graph" / f"gen-{info.id}" / "sources.json").unlink()
    assert GraphifyGenerations(root, state).current_sources() is None  # built before it


def test_a_stage_that_cannot_be_written_is_a_store_error_naming_the_folder(tmp_path):
    root, state = write_vault(tmp_path / "root"), tmp_path / "state"
    (state / "graph").mkdir(parents=True)
    (state / "graph" / "staging").write_text("a file where the folder should be")
    with pytest.raises(StoreError, match=f"graph build cannot write .*{state / 'graph'}"):
        GraphifyGenerations(root, state).build(documents(root))
