"""What a one-note refresh costs (time, bytes written, state growth) and how big the index
state folder gets under continuous churn while readers search.

    AI_MEMORY_BENCH_SIZES=10000 AI_MEMORY_BENCH_REUSE=1 .venv/bin/python -m pytest \
        benchmarks/test_churn.py -k one_note -p no:cacheprovider -q -s
    AI_MEMORY_CHURN_SECONDS=90 .venv/bin/python -m pytest benchmarks/test_churn.py -k disk \
        -p no:cacheprovider -q -s

The one-note rounds reuse the scale curve's state of each size (`gen-<n>-state`, built by
test_scale_curve.py or here when missing); the churn loop builds a small root of its own.
"""

from __future__ import annotations

import json
import os
import random
import threading
import time
from pathlib import Path

import pytest

from bench_corpora import (BENCH_DIR, cpu_seconds, env_ints, generated_queries, generated_root,
                           ready_app, stamp)
from memory.adapters.sqlite import SqliteVectorIndex
from memory.domain.scope import ScopeFilter

SIZES = env_ints("AI_MEMORY_BENCH_SIZES", "10000")
ROUNDS = int(os.environ.get("AI_MEMORY_CHURN_ROUNDS", "10"))
CHURN_SECONDS = float(os.environ.get("AI_MEMORY_CHURN_SECONDS", "90"))
CHURN_NOTES = int(os.environ.get("AI_MEMORY_CHURN_NOTES", "40"))
HOLD_S = float(os.environ.get("AI_MEMORY_CHURN_HOLD_S", "5"))
MB = 2**20


def folder_bytes(folder: Path) -> tuple[int, int]:
    """(bytes, files) under folder; files vanishing meanwhile are skipped."""
    total = files = 0
    for base, _, names in os.walk(folder):
        for name in names:
            try:
                total += os.stat(os.path.join(base, name)).st_size
            except FileNotFoundError:
                continue
            files += 1
    return total, files


def io_written() -> dict[str, int]:
    """This process's write counters: wchar (bytes handed to write calls) and write_bytes
    (bytes it caused to reach the block layer)."""
    fields = dict(line.split(": ") for line in Path("/proc/self/io").read_text().splitlines())
    return {"wchar": int(fields["wchar"]), "write_bytes": int(fields["write_bytes"])}


class Sampler:
    """Polls the size of a folder on a thread; keeps the maximum seen."""

    def __init__(self, folder: Path, every_s: float = 0.02):
        self.folder, self.every_s = folder, every_s
        self.max_bytes = self.max_files = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()

    def _sample(self) -> None:
        size, files = folder_bytes(self.folder)
        self.max_bytes, self.max_files = max(self.max_bytes, size), max(self.max_files, files)

    def _run(self) -> None:
        while not self._stop.is_set():
            self._sample()
            self._stop.wait(self.every_s)


def _append(path: Path, round_no: int) -> None:
    with path.open("a", encoding="utf-8") as handle:
        handle.write(f"\nChurn edit {round_no} at {time.time_ns()}: the retry budget is now 5.\n")


def _rounds(service, files: list[Path], index_dir: Path, first: int) -> list[dict]:
    rows = []
    for round_no in range(first, first + ROUNDS):
        _append(files[(round_no * 7919 + 13) % len(files)], round_no)
        written, cpu, started = io_written(), cpu_seconds(), time.perf_counter()
        with Sampler(index_dir) as sampler:
            report = service.refresh("index")
        seconds, cpu = time.perf_counter() - started, cpu_seconds() - cpu
        after = io_written()
        stage = report.stage("index")
        assert stage.outcome == "published" and stage.changed == 1, stage.as_dict()
        rows.append({"s": seconds, "cpu_s": cpu, "peak_mb": sampler.max_bytes / MB,
                     **{k: (after[k] - written[k]) / MB for k in after}})
    return rows


def _summary(rows: list[dict]) -> dict:
    def median(key: str) -> float:
        return sorted(r[key] for r in rows)[len(rows) // 2]
    return {"median_s": round(median("s"), 3), "max_s": round(max(r["s"] for r in rows), 3),
            "cpu_median_s": round(median("cpu_s"), 3),
            "wchar_mb_median": round(median("wchar"), 2),
            "write_bytes_mb_median": round(median("write_bytes"), 2),
            "index_mb_peak": round(max(r["peak_mb"] for r in rows), 1)}


@pytest.mark.parametrize("notes", SIZES, ids=lambda n: f"{n}-notes")
def test_one_note_refresh_cost(notes):
    """Rounds in a process that has only refreshed (as a one-shot CLI refresh), then, after
    one search has loaded the vectors into memory, in a process that serves (the watcher)."""
    state = BENCH_DIR / f"gen-{notes}-state"
    root = generated_root(notes)
    app = ready_app(root, state)
    service = app.use_cases.service()
    files = sorted(root.rglob("*.md"))
    index_dir = state / "index"
    before_bytes, before_files = folder_bytes(index_dir)
    refreshing = _rounds(service, files, index_dir, 0)
    SqliteVectorIndex(app.gateways.sqlite(), wait_for_matrix=True).search(
        app.gateways.embedder().embed_query("a search, as a server makes"), ScopeFilter(), 1)
    serving = _rounds(service, files, index_dir, ROUNDS)
    after_bytes, after_files = folder_bytes(index_dir)
    info = {"notes": notes, "rounds": ROUNDS, "refreshing_only": _summary(refreshing),
            "serving": _summary(serving),
            "index_mb_before": round(before_bytes / MB, 1), "files_before": before_files,
            "index_mb_after": round(after_bytes / MB, 1), "files_after": after_files, **stamp()}
    print(f"\n[one-note-refresh-cost] {json.dumps(info)}")


def _reader(app, stop: threading.Event, counts: dict) -> None:
    """Searches in a loop; every few seconds one search holds its read open for HOLD_S,
    as a slow client's search would, while refreshes go on."""
    chunks, index = app.gateways.lexical(), app.gateways.index()
    queries = [q["question"] for q in generated_queries(50)]
    scope = ScopeFilter()
    held_until = 0.0
    while not stop.is_set():
        with index.steady():
            chunks.search(random.choice(queries), scope, 10)
            counts["searches"] += 1
            if time.monotonic() > held_until + 2 * HOLD_S:
                held_until = time.monotonic() + HOLD_S
                while time.monotonic() < held_until and not stop.is_set():
                    chunks.search(random.choice(queries), scope, 10)
                    counts["searches"] += 1
                    time.sleep(0.05)
                counts["holds"] += 1


def test_disk_under_churn():
    root = generated_root(CHURN_NOTES, fresh=True)
    state = BENCH_DIR / f"churn-{CHURN_NOTES}-state"
    writer = ready_app(root, state, full=True)
    service = writer.use_cases.service()
    reader = ready_app(root, state)  # another container: its own index reader
    one_state, _ = folder_bytes(state / "index")
    files = sorted(root.rglob("*.md"))
    stop, counts = threading.Event(), {"searches": 0, "holds": 0}
    thread = threading.Thread(target=_reader, args=(reader, stop, counts), daemon=True)
    refreshes, rng = 0, random.Random(3)
    started = time.monotonic()
    with Sampler(state / "index") as sampler:
        thread.start()
        while time.monotonic() - started < CHURN_SECONDS:
            _append(rng.choice(files), refreshes)
            assert service.refresh("index").stage("index").outcome == "published"
            refreshes += 1
        stop.set()
        thread.join()
    final, final_files = folder_bytes(state / "index")
    info = {"notes": CHURN_NOTES, "seconds": CHURN_SECONDS, "refreshes": refreshes,
            **counts, "one_state_mb": round(one_state / MB, 2),
            "max_index_mb": round(sampler.max_bytes / MB, 2), "max_files": sampler.max_files,
            "final_index_mb": round(final / MB, 2), "final_files": final_files, **stamp()}
    print(f"\n[disk-under-churn] {json.dumps(info)}")
