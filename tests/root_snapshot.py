"""The bytes of a memory root, to prove a refused call changed nothing."""

from __future__ import annotations

import os
from pathlib import Path


def snapshot(root: Path) -> dict[str, bytes | None]:
    """Every file's bytes and every folder (None) under root, but the state folder where
    the write lock lives."""
    found: dict[str, bytes | None] = {}
    for folder, dirs, files in os.walk(root):
        rel = Path(folder).relative_to(root)
        if rel == Path("."):
            dirs[:] = [d for d in dirs if d != ".ai-memory"]
        for name in dirs:
            found[(rel / name).as_posix()] = None
        for name in files:
            found[(rel / name).as_posix()] = (Path(folder) / name).read_bytes()
    return found
