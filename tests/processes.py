"""The processes a test left running: graph builds of a state folder, found in /proc."""

from __future__ import annotations

from pathlib import Path


def graph_workers(state: Path) -> list[int]:
    """Pids of Graphify build processes still working for this state folder."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, ValueError):
            continue
        if "memory.adapters.graphify.worker" in cmdline and str(state) in cmdline:
            found.append(int(proc.name))
    return found
