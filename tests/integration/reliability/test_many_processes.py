"""Guarantee 1: several `serve` processes on one root stay correct while another process
edits notes and refreshes: no error, every answer from one complete published generation,
every edit visible to every server as soon as its refresh returns.

Runs on both stores: SQLite in the state folder, and Postgres (servers and the refresh
given --store) with half the servers (at least two) and half the rounds, to spare CI time.
Scale with AI_MEMORY_SERVERS and AI_MEMORY_ROUNDS (scripts/stress.py does).
"""

from __future__ import annotations

import os
from contextlib import AsyncExitStack
from pathlib import Path

import anyio
import pytest
from live_root import LiveRoot
from mcp import ClientSession
from mcp.client.stdio import stdio_client

SERVERS = int(os.environ.get("AI_MEMORY_SERVERS", "4"))
ROUNDS = int(os.environ.get("AI_MEMORY_ROUNDS", "10"))
CALL_TIMEOUT_S = 120
PAUSE_S = float(os.environ.get("AI_MEMORY_SEARCH_PAUSE_S", "0.1"))

FILLER = [
    "The ledger service reconciles card payments every night against the bank export.",
    "Retries use exponential backoff starting at two seconds, at most five attempts.",
    "A reconciliation mismatch opens an incident and pages the payments on-call.",
    "Webhooks from the provider are acknowledged first and processed by a worker.",
    "The idempotency key is the provider event id, stored for thirty days.",
    "Deploys happen on weekdays only, never during the nightly reconciliation window.",
]
EDITABLE = [f"Repos/ledger/Notes/Topic {i}.md" for i in range(4)]
NOTES = {
    **{rel: f"# Topic {i}\n\n" + "\n".join(FILLER[i:] + FILLER[:i]) + "\n"
       for i, rel in enumerate(EDITABLE)},
    "Repos/ledger/_repo.md": "# ledger\n\nThe ledger repository keeps the books.\n",
    "Decisions/Backoff.md": "# Backoff\n\nAll clients back off exponentially on retries.\n",
}
QUERIES = ["ledger reconciliation mismatch", "exponential backoff retries",
           "idempotency key provider event", "webhook worker acknowledged"]


def marker(round_no: int) -> str:
    return f"zq{round_no}x"


class Published:
    """Every version of every note written, and what each generation says it holds.

    Servers index edits before a search by themselves (read-your-writes), so generations
    are published by them as well as by the refresh process: each generation's manifest
    (path -> content hash, as the index's change log gives it back) says which written
    version of a note it must cite.
    """

    def __init__(self, root: LiveRoot):
        self.root = root
        self.versions: dict[str, list[str]] = {}  # content_hash of the bytes -> lines
        self.manifests: dict[str, dict[str, str]] = {}  # generation -> path -> content_hash
        self.key = root.content_key()

    def wrote(self, rel: str, text: str) -> None:
        self.root.write(rel, text, atomic=True)
        self.versions[self.key.hash(text.encode("utf-8"))] = text.split("\n")

    def look(self) -> None:
        """Read the manifest of every generation not seen yet (while the index holds it)."""
        for gen_id in self.root.index_generations():
            if gen_id not in self.manifests:
                entries = self.root.index.manifest_of(gen_id)
                assert entries is not None, gen_id
                self.manifests[gen_id] = entries

    def problems_with(self, packet: dict) -> list[str]:
        gen = packet["generation"]["index"]
        if gen not in self.manifests:
            return [f"generation {gen!r} was never published"]
        found = []
        for item in packet["items"]:
            digest = self.manifests[gen].get(item["path"])
            if digest not in self.versions:
                found.append(f"{item['path']} in {gen} is no version that was written")
                continue
            lines = self.versions[digest]
            cited = "\n".join(lines[item["start_line"] - 1:item["end_line"]])
            if item["text"] != cited:
                found.append(f"{item['citation']} in {gen}: text {item['text'][:60]!r} is not "
                             f"the generation's {cited[:60]!r}")
        return found


def edit(published: Published, round_no: int) -> str:
    """Insert a marker line near the top of one note: every later line moves down."""
    rel = EDITABLE[round_no % len(EDITABLE)]
    lines = published.root.read_lines(rel)
    lines.insert(2, f"Round {round_no}: the {marker(round_no)} marker moved here.")
    published.wrote(rel, "\n".join(lines))
    return rel


class Searchers:
    """Sessions searching in a loop; every packet is kept for checking at the end."""

    def __init__(self, sessions: list[ClientSession]):
        self.sessions = sessions
        self.packets: list[dict] = []
        self.errors: list[str] = []
        self.round = 0
        self.stop = anyio.Event()

    async def call(self, session: ClientSession, name: str, **arguments):
        with anyio.fail_after(CALL_TIMEOUT_S):
            return await session.call_tool(name, arguments)

    async def search(self, session: ClientSession, query: str) -> dict | None:
        try:
            result = await self.call(session, "memory_search", query=query, limit=5)
        except Exception as exc:  # noqa: BLE001 - the guarantee is zero errors of any kind
            self.errors.append(f"{query!r}: {type(exc).__name__}: {exc}")
            return None
        if result.is_error:
            self.errors.append(f"{query!r}: {result.content[0].text}")
            return None
        self.packets.append(result.structured_content)
        return result.structured_content

    async def loop(self, number: int) -> None:
        session, turn = self.sessions[number], number
        while not self.stop.is_set():
            turn += 1
            query = QUERIES[turn % len(QUERIES)]
            if turn % 2:
                query = f"{marker(max(0, self.round - turn % 3))} marker moved"
            await self.search(session, query)
            await anyio.sleep(PAUSE_S)


def scale(store: str | None) -> tuple[int, int]:
    """(servers, rounds) for a store."""
    return (SERVERS, ROUNDS) if store is None else (max(2, SERVERS // 2), max(2, ROUNDS // 2))


async def open_sessions(stack: AsyncExitStack, root: LiveRoot, logs: Path,
                        servers: int) -> list[ClientSession]:
    sessions = []
    for number in range(servers):
        errlog = stack.enter_context((logs / f"serve-{number}.stderr").open("w"))
        read, write = await stack.enter_async_context(stdio_client(root.server_params(),
                                                                   errlog=errlog))
        session = await stack.enter_async_context(ClientSession(read, write))
        with anyio.fail_after(CALL_TIMEOUT_S):
            await session.initialize()
        sessions.append(session)
    return sessions


@pytest.mark.slow
@pytest.mark.anyio
async def test_servers_answer_from_whole_generations_while_another_process_refreshes(
        tmp_path, warm, store, record_property):
    servers, rounds = scale(store)
    root = LiveRoot.create(tmp_path / "memory", {}, store=store)
    published = Published(root)
    for rel, text in NOTES.items():
        published.wrote(rel, text)
    root.refresh("full")
    logs = tmp_path / "logs"
    logs.mkdir()
    async with AsyncExitStack() as stack:
        searchers = Searchers(await open_sessions(stack, root, logs, servers))
        for session in searchers.sessions:  # each builds its service and loads the model
            assert await searchers.search(session, QUERIES[0]) is not None, searchers.errors
        async with anyio.create_task_group() as group:
            for number in range(servers):
                group.start_soon(searchers.loop, number)
            for round_no in range(1, rounds + 1):
                rel = edit(published, round_no)
                report = await anyio.to_thread.run_sync(root.refresh)
                gen = report["index_generation"]
                published.look()
                searchers.round = round_no
                for number, session in enumerate(searchers.sessions):
                    packet = await searchers.search(session, f"{marker(round_no)} marker moved")
                    assert packet is not None, searchers.errors[-1:]
                    assert packet["generation"]["index"] == gen, (number, round_no)
                    hits = [i for i in packet["items"] if i["path"] == rel]
                    assert hits and marker(round_no) in hits[0]["text"], (number, round_no, packet)
            searchers.stop.set()
    published.look()
    problems = [p for packet in searchers.packets for p in published.problems_with(packet)]
    crashes = [f.name for f in logs.iterdir() if "Traceback" in f.read_text()]
    record_property("figures", {"store": "postgres" if store else "sqlite",
                                "servers": servers, "rounds": rounds,
                                "searches": len(searchers.packets), "errors": len(searchers.errors),
                                "inconsistent_answers": len(problems)})
    print(f"\n[many-processes] {'postgres' if store else 'sqlite'}: {servers} servers, "
          f"{rounds} edit/refresh rounds, "
          f"{len(searchers.packets)} searches, {len(searchers.errors)} errors, "
          f"{len(problems)} inconsistent answers")
    assert searchers.errors == []
    assert problems == [], problems[:5]
    assert crashes == []
