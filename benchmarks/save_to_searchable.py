"""Time from saving a note to finding its new words through a running `ai-memory serve`.

    python benchmarks/save_to_searchable.py /tmp/vault-2000 --notes 2000 --edits 5

Generates the root (benchmarks/generate_root.py) unless it exists, indexes it once with
`ai-memory refresh`, starts the stdio server (watching, the default) and, for each edit,
appends a line with a fresh token to one note and measures:

- save -> searchable: memory_search for the token, repeated every --poll-ms, until the
  edited note comes back citing the new line (what an agent that searches right after
  writing sees);
- save -> indexed by the watcher: no search at all, until the server's refresh of the
  edit is recorded in refresh-history.jsonl (the watcher alone).

Prints a Markdown table with medians; never calls memory_refresh.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import secrets
import statistics
import subprocess
import sys
import time
from pathlib import Path

import anyio
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

sys.path.insert(0, str(Path(__file__).parent))
from generate_root import generate_root  # noqa: E402

OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}


def prepare(root: Path, notes: int) -> None:
    if not root.exists():
        generate_root(root, notes=notes, seed=0)
    subprocess.run([sys.executable, "-m", "memory", "refresh", "--mode", "index",
                    "--root", str(root)], check=True, env={**os.environ, **OFFLINE},
                   stdout=subprocess.DEVNULL)


def history_lines(root: Path) -> int:
    path = root / ".ai-memory" / "refresh-history.jsonl"
    return len(path.read_text().splitlines()) if path.exists() else 0


def targets(root: Path, count: int) -> list[Path]:
    notes = sorted(p for p in root.rglob("*.md") if ".ai-memory" not in p.parts)
    step = max(1, len(notes) // (count + 1))
    return [notes[(i + 1) * step] for i in range(count)]


def append_token(note: Path) -> tuple[str, float]:
    token = f"savetoken{secrets.token_hex(4)}"
    with note.open("a", encoding="utf-8") as handle:
        handle.write(f"\nThe {token} marker was added by the save-to-searchable benchmark.\n")
    return token, time.perf_counter()


async def searchable(session: ClientSession, token: str, rel: str, poll_s: float,
                     timeout: float) -> tuple[float, str]:
    with anyio.fail_after(timeout):
        while True:
            # status any: the generated root has superseded notes, hidden by default
            result = await session.call_tool("memory_search",
                                             {"query": token, "limit": 3, "status": "any"})
            if result.is_error:
                raise SystemExit(f"memory_search failed: {result.content[0].text}")
            packet = result.structured_content or {}
            # The cited text must hold the token: the note alone could come back on meaning.
            if any(item["path"] == rel and token in item["text"]
                   for item in packet.get("items", [])):
                return time.perf_counter(), packet.get("freshness", "?")
            await anyio.sleep(poll_s)


async def indexed(root: Path, before: int, poll_s: float, timeout: float) -> float:
    with anyio.fail_after(timeout):
        while history_lines(root) == before:
            await anyio.sleep(poll_s)
    return time.perf_counter()


async def wait_ready(session: ClientSession, timeout: float) -> None:
    with anyio.fail_after(timeout):
        while True:
            health = (await session.call_tool("memory_health", {})).structured_content or {}
            if health.get("embedder", {}).get("state") == "ready":
                return
            await anyio.sleep(0.25)


async def run(args) -> dict:
    root = Path(args.root).resolve()
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "memory", "serve", "--root", str(root)],
                                   env={**os.environ, **OFFLINE})
    notes = targets(root, args.edits * 2 + 1)
    rel = lambda p: p.relative_to(root).as_posix()  # noqa: E731
    out: dict = {"search": [], "watcher": [], "freshness": []}
    with open(args.errlog, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                await session.list_tools()
                await wait_ready(session, args.timeout)
                # The watcher starts once the service is built: wait for a first edit.
                token, _ = append_token(notes[0])
                await searchable(session, token, rel(notes[0]), 0.1, args.timeout)
                await anyio.sleep(1.0)
                for note in notes[1:args.edits + 1]:
                    token, saved = append_token(note)
                    found, freshness = await searchable(session, token, rel(note),
                                                        args.poll_ms / 1000, args.timeout)
                    out["search"].append(found - saved)
                    out["freshness"].append(freshness)
                    await anyio.sleep(1.0)
                for note in notes[args.edits + 1:]:
                    before = history_lines(root)
                    token, saved = append_token(note)
                    done = await indexed(root, before, args.poll_ms / 1000, args.timeout)
                    out["watcher"].append(done - saved)
                    await searchable(session, token, rel(note), 0.05, args.timeout)
                    await anyio.sleep(1.0)
    return out


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("root", help="memory root (generated there if missing)")
    p.add_argument("--notes", type=int, default=2000)
    p.add_argument("--edits", type=int, default=5)
    p.add_argument("--poll-ms", type=float, default=20.0)
    p.add_argument("--timeout", type=float, default=300.0)
    p.add_argument("--errlog", default=os.devnull, help="where the server's stderr goes")
    args = p.parse_args(argv)
    prepare(Path(args.root), args.notes)
    out = anyio.run(run, args)
    ms = lambda values: f"{statistics.median(values) * 1000:.0f} ms"  # noqa: E731
    span = lambda values: f"{min(values) * 1000:.0f} / {max(values) * 1000:.0f} ms"  # noqa: E731
    notes = sum(1 for p in Path(args.root).rglob("*.md") if ".ai-memory" not in p.parts)
    print(f"\nsave -> searchable on `{args.root}` ({notes} notes), {platform.machine()}, "
          f"{os.cpu_count()} CPUs, Python {platform.python_version()}\n")
    print("| measure | median | min / max |\n|---|---|---|")
    print(f"| save -> found by memory_search (polled every {args.poll_ms:g} ms, "
          f"{args.edits} edits) | {ms(out['search'])} | {span(out['search'])} |")
    print(f"| save -> refresh recorded by the watcher (no search, {args.edits} edits) "
          f"| {ms(out['watcher'])} | {span(out['watcher'])} |")
    print(f"\nfreshness of the finding packets: {json.dumps(out['freshness'])}")


if __name__ == "__main__":
    main()
