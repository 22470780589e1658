"""Guarantee 3: a damaged current generation (truncated or garbage index file, damaged
graph.json, a pointer naming a missing file or holding garbage) is reported by health,
never crashes a tool, searches serve the previous good generation (or say a refresh is
needed), and one `refresh` publishes a good generation again.

Each case runs against a server that had the good generation open when the damage
happened, and against one started after it (a fresh process).
"""

from __future__ import annotations

import json
import random

import anyio
import pytest
from live_root import LiveRoot
from mcp import Client

from memory.entrypoints.mcp_server import build_server

NOTES = {
    "Repos/atlas/Notes/Caching.md": "# Caching\n\nThe atlas cache expires entries after ten "
                                    "minutes.\nSee [[Eviction]].\n",
    "Repos/atlas/Notes/Eviction.md": "# Eviction\n\nLeast recently used entries are evicted "
                                     "first when the cache is full.\n",
    "Decisions/Timeouts.md": "# Timeouts\n\nEvery outbound call has a five second timeout.\n",
}
QUERY = "atlas cache expires entries"


def truncate(path, keep: float = 0.5) -> None:
    size = path.stat().st_size
    with open(path, "r+b") as handle:
        handle.truncate(int(size * keep))


def garble(path) -> None:
    size = path.stat().st_size
    path.write_bytes(random.Random(7).randbytes(size))


def damage_index_truncated(root: LiveRoot) -> str:
    truncate(root.index_file(root.index_pointer()["id"]))
    return root.index_pointer()["id"]


def damage_index_tail_truncated(root: LiveRoot) -> str:
    truncate(root.index_file(root.index_pointer()["id"]), keep=0.9)
    return root.index_pointer()["id"]


def damage_index_garbage(root: LiveRoot) -> str:
    garble(root.index_file(root.index_pointer()["id"]))
    return root.index_pointer()["id"]


def damage_index_pages_garbage(root: LiveRoot) -> str:
    """Garbage over the middle of the file: the header and early pages still read fine."""
    path = root.index_file(root.index_pointer()["id"])
    data = bytearray(path.read_bytes())
    middle = slice(len(data) // 4, len(data) * 3 // 4)
    data[middle] = random.Random(11).randbytes(middle.stop - middle.start)
    path.write_bytes(bytes(data))
    return root.index_pointer()["id"]


def damage_index_pointer_missing_file(root: LiveRoot) -> None:
    pointer = {**root.index_pointer(), "id": "20200101T000000Z-000000",
               "file": "gen-20200101T000000Z-000000.sqlite"}
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
                damage_index_pages_garbage, damage_index_pointer_missing_file,
                damage_index_pointer_garbage]
GRAPH_DAMAGE = [damage_graph_truncated, damage_graph_garbage,
                damage_graph_pointer_missing_generation]


@pytest.fixture
def root(tmp_path, embedder) -> LiveRoot:
    """Two good generations of index and graph: the newer is the one damaged."""
    root = LiveRoot.create(tmp_path / "memory", NOTES)
    root.service(embedder).refresh("full")
    root.write("Decisions/Retries.md", "# Retries\n\nRetry idempotent calls twice.\n")
    root.service(embedder).refresh("full")
    assert len(root.index_generations()) == 2 and len(root.graph_generations()) == 2
    return root


async def every_tool(service) -> dict[str, object]:
    """Call each read tool once; return what they gave (structured content or error text)."""
    calls = {"memory_search": {"query": QUERY},
             "memory_get": {"identity": "Repos/atlas/Notes/Caching.md"},
             "memory_neighbors": {"identity": "Repos/atlas/Notes/Caching.md"},
             "memory_path": {"source": "Repos/atlas/Notes/Caching.md",
                             "target": "Repos/atlas/Notes/Eviction.md"},
             "memory_explain": {"query": QUERY},
             "memory_health": {}}
    out = {}
    async with Client(build_server(lambda: service)) as client:
        for name, arguments in calls.items():
            with anyio.fail_after(120):
                result = await client.call_tool(name, arguments)
            text = result.content[0].text if result.content else ""
            assert "internal error" not in text and "Traceback" not in text, (name, text)
            out[name] = text if result.is_error else result.structured_content
    return out


def check_damaged(results: dict, good: set[str], index_damaged: bool) -> None:
    health = results["memory_health"]
    assert isinstance(health, dict), health
    if index_damaged:
        assert health["healthy"] is False and health["index"]["problems"], health
    else:
        assert health["graph"]["problems"], health
    packet = results["memory_search"]
    assert isinstance(packet, dict), packet
    if index_damaged:
        # A good generation answers (the previous one if the current file is damaged),
        # or the packet says to refresh.
        served = packet["generation"]["index"] in good and packet["items"]
        assert served or any("refresh" in w for w in packet["warnings"]), \
            (good, packet["generation"], len(packet["items"]), packet["warnings"])
    else:
        assert packet["items"] and packet["generation"]["index"]
    for name in ("memory_neighbors", "memory_path"):
        if isinstance(results[name], str):  # a tool error: it must say what to do
            assert "refresh" in results[name], results[name]


async def damaged_then_repaired(root: LiveRoot, embedder, damage, index_damaged: bool) -> None:
    good = set(root.index_generations())
    serving = root.service(embedder)
    await every_tool(serving)  # opens the good generations, as a running server has
    good.discard(damage(root))
    for service in (serving, root.service(embedder)):  # a running server, then a fresh one
        check_damaged(await every_tool(service), good, index_damaged)
    # The plain (index) refresh repairs the index; the graph needs a full one.
    mode = "index" if index_damaged else "full"
    report = await anyio.to_thread.run_sync(lambda: root.refresh(mode))
    assert report["ok"], report
    assert root.index_problems() == [] and root.graph_problems() == []
    for service in (serving, root.service(embedder)):
        results = await every_tool(service)
        assert results["memory_health"]["healthy"], results["memory_health"]
        assert results["memory_search"]["generation"]["index"] == root.index_pointer()["id"]
        assert results["memory_search"]["items"]
        assert isinstance(results["memory_neighbors"], dict), results["memory_neighbors"]


@pytest.mark.anyio
@pytest.mark.parametrize("damage", INDEX_DAMAGE, ids=lambda f: f.__name__[7:])
async def test_a_damaged_index_is_reported_served_around_and_repaired(root, embedder, damage):
    await damaged_then_repaired(root, embedder, damage, index_damaged=True)


@pytest.mark.anyio
@pytest.mark.parametrize("damage", GRAPH_DAMAGE, ids=lambda f: f.__name__[7:])
async def test_a_damaged_graph_is_reported_served_around_and_repaired(root, embedder, damage):
    await damaged_then_repaired(root, embedder, damage, index_damaged=False)


@pytest.mark.anyio
async def test_the_only_generation_damaged_says_to_refresh(tmp_path, embedder):
    root = LiveRoot.create(tmp_path / "memory", NOTES)
    root.service(embedder).refresh("full")
    damage_index_garbage(root)
    results = await every_tool(root.service(embedder))
    packet = results["memory_search"]
    assert packet["items"] == [] and any("refresh" in w for w in packet["warnings"]), packet
    assert results["memory_health"]["healthy"] is False
    assert root.refresh("index")["ok"]
    assert root.index_problems() == []
