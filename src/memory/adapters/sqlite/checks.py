"""Checks of whole files: SQLite's quick_check of the live database on a thread of its
own, and the SHA-256 of the last-good copy."""

from __future__ import annotations

import os
import threading

from memory.adapters.sqlite.database import Database
from memory.adapters.sqlite.layout import sha256_of


class FileCheck:
    """SQLite's quick_check of one state of one file, run once on a thread of its own."""

    def __init__(self, database: Database):
        self.result: str | None = None
        self._thread = threading.Thread(target=self._run, args=(database,), daemon=True,
                                        name="index-check")
        self._thread.start()

    def _run(self, database: Database) -> None:
        try:
            self.result = database.quick_check()
        except Exception as exc:  # noqa: BLE001 - any failure to check is a failed check
            self.result = f"{type(exc).__name__}: {exc}"

    def wait(self, timeout: float) -> str | None:
        self._thread.join(timeout)
        return self.result


def verified(path, size: int, sha256: str) -> str:
    """The copy is never written after it is made: any change to its bytes is damage."""
    try:
        if os.path.getsize(path) != size or sha256_of(path) != sha256:
            return "the last-good copy of the index is damaged too"
    except OSError as exc:
        return f"the last-good copy of the index is unreadable: {exc}"
    return "ok"
