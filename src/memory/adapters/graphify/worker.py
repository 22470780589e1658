"""Child process of a graph build: Graphify over a mirror of the parsed notes, then note edges.

Run as `python -m memory.adapters.graphify.worker <request.json>`; Graphify prints progress
and may touch HOME, so the parent gives it a log file and a private HOME.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from memory.adapters.graphify.mirror import update_mirror
from memory.adapters.graphify.request import DEFAULT_MEMORY_MB, decode_documents


def run(request: dict) -> dict:
    """Build, enrich and write the graph; returns the enrichment statistics."""
    from graphify.build import build_from_json
    from graphify.export import to_json
    from graphify.extract import extract

    from memory.adapters.graphify import file_labels
    from memory.adapters.graphify.note_edges import NoteEdges

    file_labels.install()

    documents = decode_documents(request)
    cache = Path(request["cache_dir"])
    files, left_out = update_mirror(cache / "mirror", documents)
    extraction = extract(files, cache_root=cache, root=cache / "mirror")
    dangling = _separate_collisions(extraction)  # Graphify's build drops these
    graph = build_from_json(extraction, directed=True, root=cache / "mirror")
    stats = NoteEdges(graph, documents).apply()
    stats.update(graphify_files=len(files), graphify_left_out=left_out[:20],
                 graphify_dropped_edges=dangling)
    graph.graph["ai_memory"] = stats
    if not to_json(graph, {}, request["output"], force=True):
        raise RuntimeError(f"graphify refused to write {request['output']}")
    return stats


def _separate_collisions(extraction: dict) -> int:
    """Give nodes of different files that share an id ids of their own; count dangling edges.

    Graphify ids come from paths with punctuation folded, so `a-b.md` and `a_b.md` can meet.
    An edge from another file to such an id cannot say which file it meant: it is left
    dangling for the build to drop (our link resolution, keyed by path, puts it back).
    """
    nodes = [n for n in extraction.get("nodes", []) if isinstance(n, dict)]
    files_of: dict[str, set[str]] = {}
    for node in nodes:
        files_of.setdefault(node.get("id"), set()).add(node.get("source_file") or "")
    shared = {nid for nid, files in files_of.items() if len(files) > 1}
    for node in nodes:
        if node.get("id") in shared:
            node["id"] = _split_id(node["id"], node.get("source_file") or "")
    edges = []
    for edge in extraction.get("edges", []):
        for end in ("source", "target"):
            if edge.get(end) in shared:
                edge[end] = _split_id(edge[end], edge.get("source_file") or "")
        edges.append(edge)
    extraction["edges"] = edges
    ids = {n.get("id") for n in nodes}
    return sum(1 for e in edges if e.get("source") not in ids or e.get("target") not in ids)


def _split_id(node_id: str, source_file: str) -> str:
    return f"{node_id}_{hashlib.sha1(source_file.encode('utf-8')).hexdigest()[:8]}"


def _end_with_parent(parent: int, every_s: float = 0.25) -> None:
    """Stop building once the refresh that started us is gone (killed, crashed): nobody
    would publish this graph, and a build of a large root can run for minutes.

    POSIX only: a dead parent shows as a changed parent pid (orphans are re-parented),
    and the build's own process group (Graphify's extraction pool) goes with it.
    """
    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(every_s)
        if os.getpgrp() == os.getpid():
            os.killpg(os.getpgrp(), signal.SIGKILL)
        os._exit(3)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def _cap_memory(megabytes: int) -> None:
    """Bound the build's address space: a note nobody foresaw fails this graph build (the
    refresh keeps the last good graph and says why) instead of exhausting the machine."""
    import resource
    if megabytes <= 0:
        return
    limit = megabytes * 1024 * 1024
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        print("usage: python -m memory.adapters.graphify.worker <request.json>", file=sys.stderr)
        return 2
    request = json.loads(Path(args[0]).read_text(encoding="utf-8"))
    if os.name == "posix":  # Windows keeps a dead parent's pid, and venvs add a launcher
        _end_with_parent(int(request.get("parent_pid") or os.getppid()))
        _cap_memory(int(request.get("memory_mb", DEFAULT_MEMORY_MB)))
    stats = run(request)
    summary = {k: v for k, v in stats.items() if k != "unresolved_examples"}
    print(json.dumps(summary), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
