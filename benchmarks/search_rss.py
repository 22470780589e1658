"""Serve searches over an already built root in this process and print its memory as JSON.

    .venv/bin/python benchmarks/search_rss.py --root DIR --state-dir DIR [--queries 200]

Run as its own process by test_scale_curve.py, so the peak RSS is that of a server: the
container, the loaded model, the open index generation and the searches, nothing else.
"""

from __future__ import annotations

import argparse
import json
import resource
import time
from pathlib import Path

import psutil

from bench_corpora import generated_queries
from memory.entrypoints.container import build
from memory.entrypoints.eval_command import run_queries
from memory.entrypoints.settings import Settings


def _mb(value: float) -> float:
    return round(value / 2**20, 1)


def _peak() -> int:
    """Peak resident bytes of this process so far.

    VmHWM, not ru_maxrss: Linux carries ru_maxrss over fork and exec, so a child of a big
    pytest process would report its parent's peak.
    """
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", required=True)
    parser.add_argument("--state-dir", required=True)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    process = psutil.Process()
    imported = process.memory_info().rss
    app = build(Settings.resolve(args.root, args.state_dir, watch=False))
    service = app.use_cases.service()
    embedder = app.gateways.embedder()
    if not embedder.wait_ready(300):
        raise SystemExit(f"embedding model not ready: {embedder.state()}")
    loaded = process.memory_info().rss
    peak_loading = _peak()
    started = time.perf_counter()
    results = run_queries(service, app.gateways.catalogue(), generated_queries(args.queries),
                          limit=10)
    print(json.dumps({
        "queries": len(results), "seconds": round(time.perf_counter() - started, 2),
        "rss_after_imports_mb": _mb(imported), "rss_model_loaded_mb": _mb(loaded),
        "rss_end_mb": _mb(process.memory_info().rss),
        "peak_rss_until_model_ready_mb": _mb(peak_loading), "peak_rss_mb": _mb(_peak())}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
