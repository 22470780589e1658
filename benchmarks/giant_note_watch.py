"""What one giant note costs everyone else while a watching `ai-memory serve` indexes it.

    python benchmarks/giant_note_watch.py /tmp/giant-root --lines 20000

Makes a small root (refreshed), starts the server watching it, saves a note of `--lines`
lines, saves a small note 8 s later, and searches about once a second meanwhile. Prints one
JSON line: when the small note became searchable, when the giant one did, and how long each
search took while the giant note was being indexed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def make_root(root: Path) -> None:
    root.mkdir(parents=True)
    for i in range(5):
        (root / f"base-{i}.md").write_text(f"# Base {i}\n\nBase note {i} about crossings.\n")
    subprocess.run([sys.executable, "-m", "memory", "refresh", "--root", str(root)],
                   check=True, capture_output=True, env=ENV)


async def search(session: ClientSession, query: str) -> tuple[float, dict]:
    started = time.monotonic()
    result = await session.call_tool("memory_search", {"query": query})
    return time.monotonic() - started, result.structured_content


async def measure(root: Path, lines: int, small_after_s: float) -> dict:
    params = StdioServerParameters(command=sys.executable, env=ENV,
                                   args=["-m", "memory", "serve", "--root", str(root)])
    async with stdio_client(params, errlog=sys.stderr) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            await session.list_tools()
            while (await session.call_tool("memory_health", {})).structured_content[
                    "embedder"]["state"] != "ready":
                await asyncio.sleep(0.5)
            await asyncio.sleep(2)  # the watcher is up
            return await _during_giant(session, root, lines, small_after_s)


async def _during_giant(session: ClientSession, root: Path, lines: int,
                        small_after_s: float) -> dict:
    start = time.monotonic()
    (root / "Giant.md").write_text("# Giant\n\n" + "".join(
        f"giant log line {i} with the word zebra{i % 977}\n" for i in range(lines)))
    small_saved = small_found = giant_found = None
    waits: list[float] = []
    while small_found is None or giant_found is None:
        now = time.monotonic() - start
        if small_saved is None and now >= small_after_s:
            (root / "Small.md").write_text("# Small\n\nthe okapi handover checklist\n")
            small_saved = now
        took, packet = await search(session, "okapi handover")
        if giant_found is None:
            waits.append(took)
        if small_saved is not None and small_found is None and any(
                i["path"] == "Small.md" for i in packet["items"]):
            small_found = time.monotonic() - start - small_saved
        _, packet = await search(session, "giant log line zebra5")
        if giant_found is None and packet["freshness"] != "stale" and any(
                i["path"] == "Giant.md" for i in packet["items"]):
            giant_found = time.monotonic() - start
        await asyncio.sleep(1)
    return {"lines": lines, "small_note_searchable_after_s": round(small_found, 2),
            "giant_note_searchable_after_s": round(giant_found, 1),
            "searches_while_giant": len(waits),
            "search_s_median": round(statistics.median(waits), 3),
            "search_s_max": round(max(waits), 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path, help="a folder to create (must not exist)")
    parser.add_argument("--lines", type=int, default=20000)
    parser.add_argument("--small-after", type=float, default=8.0)
    args = parser.parse_args()
    make_root(args.root)
    print(json.dumps(asyncio.run(measure(args.root, args.lines, args.small_after))))


if __name__ == "__main__":
    main()
