"""Start-up and search latency of `ai-memory serve` over stdio, as an MCP client sees them.

    python benchmarks/mcp_stdio.py /work/shared/eval/locomo-dev/memory \\
        --queries /work/shared/eval/locomo-dev/queries.jsonl --searches 100

Prints a Markdown table: spawn -> tools/list answered (median of --spawns processes), the
first search (builds the service), time until the embedding model is ready, and the
memory_search round trip p50/p95 once it is.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import anyio
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
FALLBACK_QUERIES = [{"question": q} for q in (
    "retry backoff", "why did the deploy fail", "token refresh bug", "cache warmup",
    "rate limiting decision", "schema migration gotchas", "how do we rotate secrets")]


def server_params(args) -> StdioServerParameters:
    extra = ["--state-dir", args.state_dir] if args.state_dir else []
    return StdioServerParameters(command=sys.executable,
                                 args=["-m", "memory", "serve", "--root", args.root, *extra],
                                 env={**os.environ, **OFFLINE})


def load_queries(path: str | None, count: int) -> list[dict]:
    rows = FALLBACK_QUERIES
    if path:
        rows = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
    return [rows[i % len(rows)] for i in range(count)]


def search_arguments(row: dict) -> dict:
    arguments = {"query": row.get("question") or row.get("query")}
    if row.get("project"):
        arguments["project"] = row["project"]
    return arguments


async def time_startup(args, errlog) -> float:
    started = time.perf_counter()
    async with stdio_client(server_params(args), errlog=errlog) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            await session.list_tools()
            return time.perf_counter() - started


async def time_searches(args, queries: list[dict], errlog) -> dict:
    async with stdio_client(server_params(args), errlog=errlog) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            await session.list_tools()
            started = time.perf_counter()
            first = await session.call_tool("memory_search", search_arguments(queries[0]))
            first_s = time.perf_counter() - started
            if first.is_error:
                raise SystemExit(f"memory_search failed: {first.content[0].text}")
            ready_s = await wait_for_model(session, started, args.model_timeout)
            rounds = []
            for row in queries:
                t = time.perf_counter()
                result = await session.call_tool("memory_search", search_arguments(row))
                rounds.append(time.perf_counter() - t)
                if result.is_error:
                    raise SystemExit(f"memory_search failed: {result.content[0].text}")
            return {"first": first_s, "ready": ready_s, "rounds": rounds}


async def wait_for_model(session: ClientSession, since: float, timeout: float) -> float | None:
    with anyio.move_on_after(timeout):
        while True:
            health = await session.call_tool("memory_health", {})
            if (health.structured_content or {}).get("embedder", {}).get("state") == "ready":
                return time.perf_counter() - since
            await anyio.sleep(0.25)
    return None


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def main(args) -> None:
    with open(args.errlog, "w") as errlog:
        startups = [await time_startup(args, errlog) for _ in range(args.spawns)]
        searches = await time_searches(args, load_queries(args.queries, args.searches), errlog)
    ms = lambda s: "n/a" if s is None else f"{s * 1000:.0f} ms"  # noqa: E731
    rounds = searches["rounds"]
    print(f"\n`ai-memory serve` over stdio on `{args.root}` ({os.cpu_count()} CPUs)\n")
    print("| measure | value |\n|---|---|")
    median = ms(statistics.median(startups))
    print(f"| spawn -> tools/list answered (median of {args.spawns}) | {median} |")
    print(f"| spawn -> tools/list, min / max | {ms(min(startups))} / {ms(max(startups))} |")
    print(f"| first memory_search (builds the service) | {ms(searches['first'])} |")
    print(f"| first search -> embedding model ready | {ms(searches['ready'])} |")
    print(f"| memory_search round trip p50 ({len(rounds)} queries) "
          f"| {ms(percentile(rounds, 0.5))} |")
    print(f"| memory_search round trip p95 | {ms(percentile(rounds, 0.95))} |")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("root", help="memory root to serve")
    p.add_argument("--queries", help="JSONL with `question` (and optional `project`) per line")
    p.add_argument("--state-dir", help="derived state folder (default: ROOT/.ai-memory)")
    p.add_argument("--spawns", type=int, default=5)
    p.add_argument("--searches", type=int, default=50)
    p.add_argument("--model-timeout", type=float, default=120.0)
    p.add_argument("--refresh", action="store_true", help="build the index first (mode full)")
    p.add_argument("--errlog", default=os.devnull, help="where the servers' stderr goes")
    return p.parse_args(argv)


if __name__ == "__main__":
    arguments = parse_args()
    if arguments.refresh:
        extra = ["--state-dir", arguments.state_dir] if arguments.state_dir else []
        subprocess.run([sys.executable, "-m", "memory", "refresh", "--mode", "full",
                        "--root", arguments.root, *extra],
                       check=True, env={**os.environ, **OFFLINE})
    anyio.run(main, arguments)
