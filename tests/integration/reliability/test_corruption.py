"""Guarantee 3: a damaged index (truncated or garbage database, garbage pages, bytes
flipped with the file's size and mtime kept, a pointer naming a missing file or holding
garbage), a damaged graph.json or a damaged embedding cache is reported by health, never
crashes a tool, never serves wrong text (every item cites the lines of a note as written),
searches serve a good state (the last-good copy) or say a refresh is needed, and one
`refresh` publishes a good generation again.

Each case runs against a server that had the good generation open when the damage
happened, and against one started after it (a fresh process).
"""

from __future__ import annotations

import json
import os
import random
import shutil

import anyio
import apsw
import numpy as np
import pytest
from damage_checks import (NOTES, QUERY, damaged_then_repaired, every_tool,
                           nothing_served_until_refreshed, wrong_text)
from live_root import LiveRoot



def truncate(path, keep: float = 0.5) -> None:
    size = path.stat().st_size
    with open(path, "r+b") as handle:
        handle.truncate(int(size * keep))


def garble(path) -> None:
    size = path.stat().st_size
    path.write_bytes(random.Random(7).randbytes(size))


def damage_index_truncated(root: LiveRoot) -> None:
    truncate(root.index_database())


def damage_index_tail_truncated(root: LiveRoot) -> None:
    truncate(root.index_database(), keep=0.9)


def damage_index_garbage(root: LiveRoot) -> None:
    garble(root.index_database())


def damage_index_pages_garbage(root: LiveRoot) -> None:
    """Garbage over the middle of the file: the header and early pages still read fine."""
    path = root.index_database()
    data = bytearray(path.read_bytes())
    middle = slice(len(data) // 4, len(data) * 3 // 4)
    data[middle] = random.Random(11).randbytes(middle.stop - middle.start)
    path.write_bytes(bytes(data))


def flip_bytes(path, count: int = 400, seed: int = 5) -> None:
    """Flip `count` bytes at random places, then give the file its size and mtime back:
    nothing but the bytes themselves says it changed."""
    st = path.stat()
    data = bytearray(path.read_bytes())
    rng = random.Random(seed)
    for at in rng.sample(range(len(data)), min(count, len(data))):
        data[at] ^= rng.randrange(1, 256)
    path.write_bytes(bytes(data))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def damage_index_flipped_bytes_mtime_kept(root: LiveRoot) -> None:
    flip_bytes(root.index_database())


def damage_index_text_byte_mtime_kept(root: LiveRoot) -> None:
    """One byte of a note's text made invalid UTF-8 wherever the file holds it: the pages
    are sound, only the rows say it (a UnicodeDecodeError once took every tool down)."""
    path = root.index_database()
    st = path.stat()
    data = bytearray(path.read_bytes())
    needle = b"cache expires entries"
    at = data.find(needle)
    assert at >= 0
    while at >= 0:
        data[at + 2] ^= 0x80
        at = data.find(needle, at + 1)
    path.write_bytes(bytes(data))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def damage_index_pointer_missing_file(root: LiveRoot) -> None:
    pointer = {**root.index_pointer(), "database": "20200101T000000Z-000000",
               "file": "index-20200101T000000Z-000000.sqlite"}
    root.write(".ai-memory/index/CURRENT", json.dumps(pointer))


def damage_index_pointer_garbage(root: LiveRoot) -> None:
    root.write(".ai-memory/index/CURRENT", b"\x00\xff not json")


def damage_graph_truncated(root: LiveRoot) -> None:
    truncate(root.graph_file(root.graph_pointer()["id"]))


def damage_graph_garbage(root: LiveRoot) -> None:
    garble(root.graph_file(root.graph_pointer()["id"]))


def damage_graph_pointer_missing_generation(root: LiveRoot) -> None:
    root.write(".ai-memory/graph/CURRENT", json.dumps({"id": "20200101T000000000Z-000000"}))


INDEX_DAMAGE = [damage_index_truncated, damage_index_tail_truncated, damage_index_garbage,
                damage_index_pages_garbage, damage_index_flipped_bytes_mtime_kept,
                damage_index_text_byte_mtime_kept, damage_index_pointer_missing_file,
                damage_index_pointer_garbage]
# Nothing but the bytes says so: a server that read the pages before still holds them
# whole in memory and answers right; it learns of the damage from the one that checks.
SILENT = {damage_index_flipped_bytes_mtime_kept, damage_index_text_byte_mtime_kept}
GRAPH_DAMAGE = [damage_graph_truncated, damage_graph_garbage,
                damage_graph_pointer_missing_generation]


@pytest.fixture
def root(tmp_path, embedder) -> LiveRoot:
    """Two good graph generations and two index generations in the live database (the
    last-good copy holds the older): the newer ones are damaged."""
    root = LiveRoot.create(tmp_path / "memory", NOTES)
    root.service(embedder).refresh("full")
    root.write("Decisions/Retries.md", "# Retries\n\nRetry idempotent calls twice.\n")
    root.service(embedder).refresh("full")
    root.write("Decisions/Budgets.md", "# Budgets\n\nThe cache budget is two gigabytes.\n")
    root.service(embedder).refresh("index")
    assert len(root.index_generations()) == 2 and len(root.graph_generations()) == 2
    return root


@pytest.mark.anyio
@pytest.mark.parametrize("damage", INDEX_DAMAGE, ids=lambda f: f.__name__[7:])
async def test_a_damaged_index_is_reported_served_around_and_repaired(root, embedder, damage):
    await damaged_then_repaired(root, embedder, damage, index_damaged=True,
                                silent=damage in SILENT)


@pytest.mark.anyio
@pytest.mark.parametrize("damage", GRAPH_DAMAGE, ids=lambda f: f.__name__[7:])
async def test_a_damaged_graph_is_reported_served_around_and_repaired(root, embedder, damage):
    await damaged_then_repaired(root, embedder, damage, index_damaged=False)


@pytest.mark.anyio
async def test_no_good_state_left_says_to_refresh(tmp_path, embedder):
    """The live database and its last-good copy both damaged: nothing is served."""
    root = LiveRoot.create(tmp_path / "memory", NOTES)
    root.service(embedder).refresh("full")
    damage_index_garbage(root)
    flip_bytes(root.state / "index" / root.last_good()["file"])
    await nothing_served_until_refreshed(root, embedder)


def index_vectors(root: LiveRoot) -> dict[str, list[float]]:
    """chunk text -> the vector the live index holds for it."""
    from memory.adapters.sqlite.connection import open_reader
    conn = open_reader(root.index_database())
    try:
        rows = conn.execute("SELECT c.text, c.context, v.embedding FROM chunks c "
                            "JOIN chunk_vectors v ON v.rowid = c.rowid").fetchall()
    finally:
        conn.close()
    return {(context, text): list(np.frombuffer(blob, dtype=np.float32))
            for text, context, blob in rows}


def assert_vectors_are_the_models(root: LiveRoot, embedder) -> None:
    from memory.adapters.markdown import MarkdownNoteSource
    source = MarkdownNoteSource(str(root.path))
    chunks = [c for path in source.scan().files for c in source.load(path).chunks]
    stored = index_vectors(root)
    fresh = embedder.embed_documents([c.indexed_text for c in chunks])
    assert len(stored) == len(chunks)
    for chunk, vector in zip(chunks, fresh):
        held = np.asarray(stored[(chunk.context, chunk.text)])
        cosine = float(held @ np.asarray(vector)) / float(np.linalg.norm(held)
                                                          * np.linalg.norm(vector))
        assert cosine > 0.9999, (chunk.chunk_id, cosine)


@pytest.mark.parametrize("damage", ["flipped-bytes-mtime-kept", "garbage"])
def test_a_damaged_embedding_cache_is_a_miss_never_a_wrong_vector(tmp_path, embedder, damage):
    root = LiveRoot.create(tmp_path / "memory", NOTES)
    assert root.service(embedder).refresh("full").ok
    cache = root.state / "cache" / "embeddings.sqlite"
    checkpoint = apsw.Connection(str(cache))  # as a server leaves it on exit: all in the file
    checkpoint.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    checkpoint.close()
    if damage == "garbage":
        garble(cache)
    else:
        flip_bytes(cache, count=60, seed=3)
    root.write("Decisions/Retries.md", "# Retries\n\nRetry idempotent calls twice.\n")
    service = root.service(embedder)
    for mode in ("index", "full"):
        report = service.refresh(mode)
        assert report.ok, report.as_dict()
        assert_vectors_are_the_models(root, embedder)
    packet = service.search("atlas cache expires entries")
    assert packet.items and packet.items[0].path == "Repos/atlas/Notes/Caching.md"


@pytest.mark.anyio
async def test_removing_the_state_folder_under_a_running_server(tmp_path, embedder):
    root = LiveRoot.create(tmp_path / "memory", NOTES)
    serving = root.service(embedder)
    assert serving.refresh("full").ok
    assert (await every_tool(serving))["memory_search"]["items"]
    shutil.rmtree(root.state)
    results = await every_tool(serving)
    packet = results["memory_search"]
    assert packet["items"] == [] and packet["generation"]["index"] is None, packet
    assert any("refresh" in w for w in packet["warnings"]), packet["warnings"]
    health = results["memory_health"]
    assert health["healthy"] is False and health["index"]["generation"] is None, health
    assert any(str(root.state / "index") in p for p in health["index"]["problems"]), health
    assert await anyio.to_thread.run_sync(lambda: serving.refresh("index").ok)
    results = await every_tool(serving)
    assert results["memory_health"]["healthy"], results["memory_health"]
    assert results["memory_search"]["items"]
    assert wrong_text(root, results["memory_search"]) == []
