"""What every corruption case checks: each read tool answers, health reports the damage,
no item cites text other than the note's, and one refresh repairs it (either store)."""

from __future__ import annotations

import anyio
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


def wrong_text(root: LiveRoot, packet: dict) -> list[str]:
    """Items whose text is not the cited lines of their note as it is on disk."""
    wrong = []
    for item in packet["items"]:
        lines = root.read_lines(item["path"])
        cited = "\n".join(lines[item["start_line"] - 1:item["end_line"]])
        if item["text"] != cited:
            wrong.append(f"{item['citation']}: {item['text'][:60]!r} is not {cited[:60]!r}")
    return wrong


def check_damaged(root: LiveRoot, results: dict, index_damaged: bool,
                  silent: bool = False) -> None:
    health = results["memory_health"]
    assert isinstance(health, dict), health
    if index_damaged and not silent:
        assert health["healthy"] is False and health["index"]["problems"], health
    elif not index_damaged:
        assert health["graph"]["problems"], health
    packet = results["memory_search"]
    assert isinstance(packet, dict), packet
    assert wrong_text(root, packet) == []
    if index_damaged:
        # A good state answers (the last-good copy, when the live database is damaged),
        # or the packet says to refresh.
        served = packet["generation"]["index"] and packet["items"]
        assert served or any("refresh" in w for w in packet["warnings"]), \
            (packet["generation"], len(packet["items"]), packet["warnings"])
    else:
        assert packet["items"] and packet["generation"]["index"]
    for name in ("memory_neighbors", "memory_path"):
        if isinstance(results[name], str):  # a tool error: it must say what to do
            assert "refresh" in results[name], results[name]


async def damaged_then_repaired(root: LiveRoot, embedder, damage, index_damaged: bool,
                                silent: bool = False) -> None:
    """`silent`: only the bytes say so; a server that read them before may answer right
    without noticing, and learns of the damage from the (fresh) one that checks."""
    serving = root.service(embedder)
    await every_tool(serving)  # opens the good generations, as a running server has
    damage(root)
    check_damaged(root, await every_tool(serving), index_damaged, silent)
    check_damaged(root, await every_tool(root.service(embedder)), index_damaged)
    if silent:  # the fresh server's check retired the file for the running one too
        check_damaged(root, await every_tool(serving), index_damaged)
    # The plain (index) refresh repairs the index; the graph needs a full one.
    mode = "index" if index_damaged else "full"
    report = await anyio.to_thread.run_sync(lambda: root.refresh(mode))
    assert report["ok"], report
    assert root.index_problems() == [] and root.graph_problems() == []
    for service in (serving, root.service(embedder)):
        results = await every_tool(service)
        assert results["memory_health"]["healthy"], results["memory_health"]
        assert results["memory_search"]["generation"]["index"] == root.index_id()
        assert results["memory_search"]["items"]
        assert wrong_text(root, results["memory_search"]) == []
        assert isinstance(results["memory_neighbors"], dict), results["memory_neighbors"]


async def nothing_served_until_refreshed(root: LiveRoot, embedder) -> None:
    """No good state left: a fresh server serves nothing and says to refresh; one refresh
    publishes a good generation again."""
    results = await every_tool(root.service(embedder))
    packet = results["memory_search"]
    assert packet["items"] == [] and any("refresh" in w for w in packet["warnings"]), packet
    assert results["memory_health"]["healthy"] is False
    assert root.refresh("index")["ok"]
    assert root.index_problems() == []
    assert (await every_tool(root.service(embedder)))["memory_health"]["healthy"]
