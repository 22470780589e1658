"""Concurrent memory_search calls to one real `ai-memory serve` cite what each alone cites.

MCP tool calls run on worker threads, so a search must keep nothing of its own on a shared
object. The notes hold long sections of lines that differ only in two words, and each query
names the two words of one line: every item is centred on that query's line, so evidence
built with another query's words cites other lines.
"""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from test_mcp_server import OFFLINE, refresh, serve_command

ROUNDS = 30
QUERIES_PER_ROUND = 10
FIRST = ("amber", "basalt", "cobalt", "dune", "ember", "fjord", "granite", "harbor", "iris",
         "juniper", "kelp", "lagoon", "marble", "nectar", "onyx", "pepper", "quartz", "raven",
         "saffron", "tundra", "umber", "violet", "walnut", "yarrow")
SECOND = ("anchor", "bellows", "canvas", "dynamo", "engine", "furnace", "gearbox", "hinge",
          "inverter", "jackscrew", "kiln", "lathe", "manifold", "nozzle", "oven", "piston",
          "quench", "rotor", "spindle", "turbine", "valve", "winch", "yoke", "zipper")


def pair(n: int, offset: int) -> str:
    """Two words no other line of either note has together."""
    return f"{FIRST[(n + offset) % 24]} {SECOND[(n * 5 + n // 24 + offset) % 24]}"


def log_note(title: str, offset: int) -> str:
    """One section of entries; entry n names its own two words and shares the rest."""
    entries = [f"Entry {n}: the {pair(n, offset)} outage was repaired by the night shift."
               for n in range(1, 41)]
    return f"---\ntitle: {title}\n---\n# {title}\n\n" + "\n".join(entries) + "\n"


def queries() -> list[str]:
    # Lines five apart in both notes, no word shared by two queries: centre lines differ.
    picks = [(n, offset) for n in (2, 7, 12, 17, 22) for offset in (0, 7)]
    return [f"which night shift repaired the {pair(n, o)} outage"
            for n, o in picks[:QUERIES_PER_ROUND]]


@pytest.fixture(scope="module")
def anyio_backend():
    return "asyncio"


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("parallel") / "memory"
    (base / "Ops").mkdir(parents=True)
    (base / "Ops" / "Plant Log.md").write_text(log_note("Plant log", 0), encoding="utf-8")
    (base / "Ops" / "Mill Log.md").write_text(log_note("Mill log", 7), encoding="utf-8")
    (base / "Ops" / "Shifts.md").write_text(
        "# Shifts\n\nThe night shift repairs outages; the day shift writes them up.\n",
        encoding="utf-8")
    refresh(base, "full")
    return base


async def wait_for_model(session: ClientSession) -> None:
    with anyio.fail_after(300):
        while True:
            health = (await session.call_tool("memory_health", {})).structured_content
            if health["embedder"]["state"] == "ready":
                return
            await anyio.sleep(0.25)


async def search(session: ClientSession, query: str) -> dict:
    result = await session.call_tool("memory_search", {"query": query, "limit": 8})
    assert not result.is_error, result.content
    return result.structured_content


@pytest.mark.anyio
async def test_concurrent_searches_cite_what_each_query_alone_cites(root, tmp_path):
    command, *args = serve_command(root)
    params = StdioServerParameters(command=command, args=args, env={**os.environ, **OFFLINE})
    asked = queries()
    differing: list[str] = []
    with (tmp_path / "serve.stderr").open("w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                with anyio.fail_after(60):
                    await session.initialize()
                await wait_for_model(session)
                # Nothing changes between calls, so the whole packet (generation, scores,
                # warnings, freshness included) must be the same: no field is volatile.
                alone = {q: await search(session, q) for q in asked}
                assert all(p["items"] and not p["no_answer"] for p in alone.values())
                centres = {p["items"][0]["citation"] for p in alone.values()}
                assert len(centres) == len(asked), "the queries must cite different lines"
                for round_no in range(ROUNDS):
                    together: dict[str, dict] = {}

                    async def one(query: str) -> None:
                        together[query] = await search(session, query)

                    with anyio.fail_after(120):
                        async with anyio.create_task_group() as group:
                            for query in asked:
                                group.start_soon(one, query)
                    differing += [f"round {round_no}: {q!r}: "
                                  f"{[i['citation'] for i in together[q]['items']]} != "
                                  f"{[i['citation'] for i in alone[q]['items']]}"
                                  for q in asked if together[q] != alone[q]]
    assert not differing, f"{len(differing)} of {ROUNDS * len(asked)} results differ:\n" + \
        "\n".join(differing[:20])
