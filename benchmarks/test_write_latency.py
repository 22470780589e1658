"""memory_write and memory_edit on generate_root vaults: latency including the one-note index,
its parts, and what each write adds to the state folder.

    AI_MEMORY_BENCH_SIZES=1000 .venv/bin/python -m pytest benchmarks/test_write_latency.py -s
    .venv/bin/python -m pytest benchmarks/test_write_latency.py -s \
        --benchmark-json=/tmp/writes.json                       # 1k and 10k notes

Each size is indexed once (no graph: writes do not touch it) on the production container,
then each round is one CaptureService call, exactly what the MCP tool runs in its thread:
parse, duplicate check (a search of the scope), atomic write, index of that note alone,
its evidence items. Writes put new notes on new subjects into the busiest repository of the
vault; edits append a line to one note with the hash just read. extra_info has, per round,
the duplicate check and the index step apart, the CPU time, the bytes the process wrote
and how much the state folder grew (the store measured is named: another one may replace
it). Nothing is asserted about time.
"""

from __future__ import annotations

import os
import random
import time
from collections import Counter
from pathlib import Path

import pytest

from bench_corpora import (BENCH_DIR, cpu_seconds, env_ints, generated_root, latencies_of,
                           percentiles, real_app)
from memory.application.capture.requests import EditRequest, WriteRequest
from memory.domain.new_note import Author
from memory.domain.note_text import file_hash

SIZES = env_ints("AI_MEMORY_BENCH_SIZES", "1000,10000")
ROUNDS = int(os.environ.get("AI_MEMORY_BENCH_WRITES", "20"))
AUTHOR = Author.named("write-benchmark")


class Timed:
    """A port whose calls are timed, for the breakdown of one write."""

    def __init__(self, port, method: str, seconds: list[float]):
        self._port, self._method, self._seconds = port, method, seconds

    def __getattr__(self, name):
        target = getattr(self._port, name)
        if name != self._method:
            return target

        def timed(*args, **kwargs):
            started = time.perf_counter()
            try:
                return target(*args, **kwargs)
            finally:
                self._seconds.append(time.perf_counter() - started)
        return timed


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def written_bytes() -> int:
    with open("/proc/self/io") as handle:
        return int(next(line for line in handle if line.startswith("write_bytes")).split()[1])


@pytest.fixture(scope="module", params=SIZES, ids=lambda n: f"{n}-notes")
def vault(request):
    notes = request.param
    root = generated_root(notes, fresh=True)  # no notes of an earlier run's writes
    state = BENCH_DIR / f"gen-{notes}-write-state"
    app = real_app(root, state)
    assert app.gateways.embedder().wait_ready(300)
    assert app.use_cases.indexer().refresh("index").ok
    capture = app.use_cases.capture()
    parts = {"similar": [], "index": []}
    capture._similar = Timed(capture._similar, "similar", parts["similar"])  # noqa: SLF001
    capture._indexer = Timed(capture._indexer, "index_paths", parts["index"])  # noqa: SLF001
    folders = Counter(p.split("/")[1] for p in app.gateways.index().current().manifest
                      if p.startswith("Repos/"))
    return {"notes": notes, "root": root, "state": state, "app": app, "capture": capture,
            "parts": parts, "repository": folders.most_common(1)[0][0]}


def _rounds(benchmark, vault, one) -> None:
    vault["parts"]["similar"].clear(), vault["parts"]["index"].clear()
    cpu, wrote, grew = [], [], []

    def round_(n):
        started_cpu, io, size = cpu_seconds(), written_bytes(), folder_bytes(vault["state"])
        one(n)
        cpu.append((cpu_seconds() - started_cpu) * 1000)
        wrote.append(written_bytes() - io)
        grew.append(folder_bytes(vault["state"]) - size)

    counter = iter(range(10**6))
    benchmark.pedantic(lambda: round_(next(counter)), rounds=ROUNDS, iterations=1,
                       warmup_rounds=1)
    index = vault["app"].gateways.index().current()
    benchmark.extra_info.update(
        notes=vault["notes"], chunks=index.chunks,
        store=type(vault["app"].gateways.sqlite()).__module__,
        **percentiles(latencies_of(benchmark), cpu),
        similar_p50_ms=round(sorted(vault["parts"]["similar"])[len(vault["parts"]["similar"])
                                                               // 2] * 1000, 1)
        if vault["parts"]["similar"] else None,
        index_p50_ms=round(sorted(vault["parts"]["index"])[len(vault["parts"]["index"]) // 2]
                           * 1000, 1),
        written_mb_p50=round(sorted(wrote)[len(wrote) // 2] / 1e6, 2),
        state_growth_mb_p50=round(sorted(grew)[len(grew) // 2] / 1e6, 2),
        state_growth_mb_total=round(sum(grew) / 1e6, 2),
        state_mb_after=round(folder_bytes(vault["state"]) / 1e6, 1))
    print(f"\n[{benchmark.name}] {benchmark.extra_info}")


def test_write_latency(benchmark, vault):
    capture, repository = vault["capture"], vault["repository"]

    rng = random.Random(vault["notes"])

    def write(n: int) -> None:
        # Words no other note holds: each write is new knowledge, as the duplicate check
        # would otherwise (rightly) refuse it.
        words = ["".join(rng.choice("bcdfgklmnprstvz") + rng.choice("aeiou")
                         for _ in range(3)) for _ in range(24)]
        title = f"{words[0].capitalize()} {words[1]} {words[2]} runbook"
        body = (f"# {title}\n\nRestart the {words[3]} worker after the {words[4]} sync. "
                + " ".join(words[5:]) + ".\n")
        result = capture.write(WriteRequest.parse(title=title, body=body,
                                                  repository=repository), AUTHOR)
        assert result.indexed, result.warnings

    _rounds(benchmark, vault, write)


def test_edit_latency(benchmark, vault):
    capture, root = vault["capture"], vault["root"]
    path = next(p for p in sorted(vault["app"].gateways.index().current().manifest)
                if p.startswith(f"Repos/{vault['repository']}/"))

    def edit(n: int) -> None:
        result = capture.edit(EditRequest.parse(
            identity=path, content_hash=file_hash((root / path).read_bytes()),
            operation="append", text=f"Benchmark edit {n}: the nightly check passed."),
            AUTHOR)
        assert result.indexed, result.warnings

    _rounds(benchmark, vault, edit)
