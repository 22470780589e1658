"""The state directory: created on first use, and kept out of git by its own .gitignore."""

from __future__ import annotations

import os
from pathlib import Path

from memory.ports.errors import StoreError


def ensure_state_dir(state_dir: str | os.PathLike[str]) -> Path:
    """Create the state directory if needed; write a `*` .gitignore there if it has none."""
    path = Path(state_dir)
    try:
        path.mkdir(parents=True, exist_ok=True)
        try:
            # "x" so that two processes racing here never truncate each other's file.
            with open(path / ".gitignore", "x", encoding="utf-8") as handle:
                handle.write("*\n")
        except FileExistsError:
            pass
    except OSError as exc:
        raise StoreError(f"cannot create state directory {path}: {exc}") from exc
    return path
