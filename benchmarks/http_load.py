"""N sessions searching for S seconds while another writes notes and refreshes: one shared
HTTP server (`serve --http`) against N stdio servers (`serve`) on copies of the same root.

    .venv/bin/python benchmarks/http_load.py ROOT --sessions 32 --seconds 60 \\
        [--queries FILE] [--mode both|http|stdio]

ROOT must be refreshed already (its .ai-memory is copied with it). Prints one Markdown table:
errors, searches, search round trip p50/p95, server RSS (peak of the sum over server
processes), server CPU (seconds of CPU over the window, and cores' worth), load average.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import httpx2
import psutil
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
QUERIES = ["retry backoff", "why did the deploy fail", "token refresh bug", "cache warmup",
           "rate limiting decision", "schema migration gotchas", "how do we rotate secrets",
           "webhook signature", "circuit breaker", "flaky test"]
SERVING = re.compile(r"serving .* at (?P<url>http://\S+/mcp)")
WRITE_EVERY_S = 2.0


@dataclass
class Run:
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    writes: int = 0
    refreshes: int = 0


class Sampler:
    """Peak of the summed RSS of some processes, sampled twice a second in a thread."""

    def __init__(self, processes: list[psutil.Process]):
        self.processes = processes
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self):
        self.cpu_before = self.cpu()
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.cpu_used = self.cpu() - self.cpu_before

    def cpu(self) -> float:
        total = 0.0
        for process in self.processes:
            try:
                times = process.cpu_times()
                total += times.user + times.system + times.children_user + times.children_system
            except psutil.Error:
                pass
        return total

    def _run(self):
        while not self._stop.wait(0.5):
            total = 0
            for process in self.processes:
                try:
                    total += process.memory_info().rss
                except psutil.Error:
                    pass
            self.peak = max(self.peak, total)


async def searcher(session: ClientSession, queries: list[str], offset: int, deadline: float,
                   run: Run) -> None:
    n = offset
    while time.monotonic() < deadline:
        query = queries[n % len(queries)]
        n += 1
        started = time.perf_counter()
        try:
            result = await session.call_tool("memory_search", {"query": query})
        except Exception as exc:  # noqa: BLE001 - counted, the benchmark goes on
            run.errors.append(f"search: {type(exc).__name__}: {exc}")
            continue
        run.latencies.append(time.perf_counter() - started)
        if result.is_error:
            run.errors.append(f"search: {result.content[0].text[:200]}")


async def writer(session: ClientSession, root: Path, deadline: float, run: Run) -> None:
    folder = root / "Load"
    folder.mkdir(exist_ok=True)
    while time.monotonic() < deadline:
        note = folder / f"Note {run.writes:04d}.md"
        note.write_text(f"# Load note {run.writes}\n\nThe quokka batch {run.writes} retries "
                        "the webhook with backoff.\n", encoding="utf-8")
        run.writes += 1
        try:
            result = await session.call_tool("memory_refresh", {"mode": "index"})
            run.refreshes += 1
            if result.is_error:
                run.errors.append(f"refresh: {result.content[0].text[:200]}")
        except Exception as exc:  # noqa: BLE001
            run.errors.append(f"refresh: {type(exc).__name__}: {exc}")
        await anyio.sleep(WRITE_EVERY_S)


async def drive(sessions: list[ClientSession], write: ClientSession, root: Path,
                queries: list[str], seconds: float, processes: list[psutil.Process]):
    for session in (*sessions, write):  # warm: the model is loaded, the index opened
        with anyio.fail_after(600):
            await session.call_tool("memory_search", {"query": queries[0]})
    run = Run()
    load_before = os.getloadavg()
    deadline = time.monotonic() + seconds
    with Sampler(processes) as sampler:
        async with anyio.create_task_group() as tasks:
            for i, session in enumerate(sessions):
                tasks.start_soon(searcher, session, queries, i, deadline, run)
            tasks.start_soon(writer, write, root, deadline, run)
    return run, sampler, (load_before, os.getloadavg())


async def run_http(root: Path, args, queries: list[str]):
    log = root.parent / "serve-http.stderr"
    with log.open("w") as err:
        server = subprocess.Popen(
            [sys.executable, "-m", "memory", "serve", "--root", str(root), "--http", "127.0.0.1:0"],
            stdout=subprocess.DEVNULL, stderr=err, env={**os.environ, **OFFLINE})
    try:
        url = await wait_for_url(server, log)
        # The owner's local credential, which a loopback server requires by default.
        secret = (root / ".ai-memory" / "local-token").read_text(encoding="ascii").strip()
        async with AsyncExitStack() as stack:
            sessions = [await open_http(stack, url, secret) for _ in range(args.sessions + 1)]
            return await drive(sessions[:-1], sessions[-1], root, queries, args.seconds,
                               [psutil.Process(server.pid)])
    finally:
        server.terminate()
        server.wait(timeout=30)


async def open_http(stack: AsyncExitStack, url: str, secret: str) -> ClientSession:
    client = await stack.enter_async_context(
        httpx2.AsyncClient(timeout=httpx2.Timeout(60, read=600),
                           headers={"Authorization": f"Bearer {secret}"}))
    read, write = await stack.enter_async_context(streamable_http_client(url, http_client=client))
    session = await stack.enter_async_context(ClientSession(read, write))
    await session.initialize()
    return session


async def wait_for_url(server: subprocess.Popen, log: Path) -> str:
    for _ in range(600):
        match = SERVING.search(log.read_text())
        if match:
            return match.group("url")
        if server.poll() is not None:
            raise SystemExit(f"serve --http exited:\n{log.read_text()}")
        await anyio.sleep(0.1)
    raise SystemExit("serve --http did not start")


async def run_stdio(root: Path, args, queries: list[str]):
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "memory", "serve", "--root", str(root)],
                                   env={**os.environ, **OFFLINE})
    errlog = (root.parent / "serve-stdio.stderr").open("w")
    before = set(psutil.Process().children(recursive=True))
    async with AsyncExitStack() as stack:
        sessions = []
        for _ in range(args.sessions + 1):
            read, write = await stack.enter_async_context(stdio_client(params, errlog=errlog))
            session = await stack.enter_async_context(ClientSession(read, write))
            await session.initialize()
            await session.list_tools()  # starts each server's warm-up
            sessions.append(session)
        servers = [p for p in psutil.Process().children(recursive=True) if p not in before]
        return await drive(sessions[:-1], sessions[-1], root, queries, args.seconds, servers)


def copy_root(source: Path, base: Path, name: str) -> Path:
    target = base / name / "memory"
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("daemon.json", "locks"))
    return target


def row(mode: str, servers: int, result) -> str:
    run, sampler, (load_before, load_after) = result
    lat = sorted(run.latencies)
    p50 = statistics.median(lat) * 1000 if lat else float("nan")
    p95 = lat[int(0.95 * (len(lat) - 1))] * 1000 if lat else float("nan")
    return (f"| {mode} | {servers} | {len(run.errors)} | {len(lat)} | {run.writes} / "
            f"{run.refreshes} | {p50:.0f} | {p95:.0f} | {sampler.peak / 2**20:.0f} | "
            f"{sampler.cpu_used:.0f} s | {load_before[0]:.1f} -> {load_after[0]:.1f} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("--sessions", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--queries", type=Path)
    parser.add_argument("--mode", choices=("both", "http", "stdio"), default="both")
    args = parser.parse_args()
    queries = QUERIES
    if args.queries:
        rows = [json.loads(x) for x in args.queries.read_text().splitlines() if x.strip()]
        queries = [r.get("question") or r["query"] for r in rows]
    base = Path(tempfile.mkdtemp(prefix="http-load-"))
    print("| mode | server processes | errors | searches | notes written / refreshes "
          "| p50 ms | p95 ms | server RSS MB (peak, all processes) | server CPU "
          "| load average (1 min) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    if args.mode in ("both", "http"):
        result = asyncio.run(run_http(copy_root(args.root, base, "http"), args, queries))
        print(row("HTTP, one shared server", 1, result), flush=True)
        for error in result[0].errors[:5]:
            print(f"  error: {error}", file=sys.stderr)
    if args.mode in ("both", "stdio"):
        result = asyncio.run(run_stdio(copy_root(args.root, base, "stdio"), args, queries))
        print(row("stdio, one server per session", args.sessions + 1, result), flush=True)
        for error in result[0].errors[:5]:
            print(f"  error: {error}", file=sys.stderr)
    shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
