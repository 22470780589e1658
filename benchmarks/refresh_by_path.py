"""One-note refresh by path, as memory_write indexes: append a line, refresh_paths([path]).

    PYTHONPATH=src .venv/bin/python benchmarks/refresh_by_path.py 50000  # a built gen-<n>-state
"""

from __future__ import annotations

import json
import sys
import time

from bench_corpora import BENCH_DIR, cpu_seconds, generated_root, real_app

ROUNDS = 10


def main(notes: int) -> dict:
    root = generated_root(notes)
    app = real_app(root, BENCH_DIR / f"gen-{notes}-state")
    indexer = app.use_cases.indexer()
    assert app.gateways.embedder().wait_ready(300), "embedding model not ready"
    files = sorted(root.rglob("*.md"))
    walls, cpus = [], []
    for i in range(ROUNDS):
        path = files[(i * 7919 + 101) % len(files)]
        with path.open("a", encoding="utf-8") as handle:
            handle.write(f"\nWatcher edit {i} at {time.time_ns()}: the retry budget is now 7.\n")
        cpu, started = cpu_seconds(), time.perf_counter()
        report = indexer.refresh_paths([path.relative_to(root).as_posix()])
        walls.append(time.perf_counter() - started)
        cpus.append(cpu_seconds() - cpu)
        assert report.stage("index").outcome == "published", report.stage("index")
    walls.sort()
    cpus.sort()
    return {"notes": notes, "median_s": round(walls[ROUNDS // 2], 3),
            "max_s": round(walls[-1], 3), "cpu_median_s": round(cpus[ROUNDS // 2], 3)}


if __name__ == "__main__":
    print(json.dumps(main(int(sys.argv[1]))))
