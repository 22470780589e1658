"""Graph mirror cost: what writing the notes' mirror adds to a Graphify build.

    .venv/bin/python benchmarks/generate_root.py /tmp/vault --notes 2000
    .venv/bin/python benchmarks/graph_mirror.py /tmp/vault --rounds 5

Per round, in one process: the mirror written into an empty folder (a first build), the
same mirror brought up to date with nothing changed (every later build), then Graphify's
extraction and build over it, warm cache. Rounds are interleaved and the best is kept,
since other work on a shared machine can only slow a round down.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

from graphify.build import build_from_json
from graphify.extract import extract

from memory.adapters.graphify.mirror import update_mirror
from memory.adapters.markdown import MarkdownNoteSource


def timed(call) -> float:
    started = time.perf_counter()
    call()
    return time.perf_counter() - started


def one_round(docs, cache: Path) -> dict[str, float]:
    mirror = cache / "mirror"
    shutil.rmtree(mirror, ignore_errors=True)
    first = timed(lambda: update_mirror(mirror, docs))
    files: list[Path] = []
    again = timed(lambda: files.extend(update_mirror(mirror, docs)[0]))
    graphify = timed(lambda: build_from_json(extract(files, cache_root=cache, root=mirror),
                                             directed=True, root=mirror))
    return {"first_write_s": first, "unchanged_s": again, "graphify_s": graphify}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    source = MarkdownNoteSource(args.root)
    docs = [source.load(p) for p in sorted(source.scan().files)]
    with tempfile.TemporaryDirectory() as tmp:
        one_round(docs, Path(tmp))  # Graphify's cache warm, as for every build but the first
        rounds = [one_round(docs, Path(tmp)) for _ in range(args.rounds)]
    best = {k: min(r[k] for r in rounds) for k in rounds[0]}
    print(f"{len(docs)} notes, best of {args.rounds}: mirror written {best['first_write_s']:.2f}s, "
          f"mirror unchanged {best['unchanged_s']:.2f}s, Graphify over it "
          f"{best['graphify_s']:.2f}s")


if __name__ == "__main__":
    main()
