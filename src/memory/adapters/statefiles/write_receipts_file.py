"""JsonlWriteReceipts: `<state_dir>/write-receipts.jsonl`, one line per write or edit."""

from __future__ import annotations

import os
from pathlib import Path

from memory.adapters.statefiles.jsonl_file import JsonlFile
from memory.domain.write_receipts import WriteReceipt
from memory.ports.write_receipts import WriteReceipts

_FIELDS = ("path", "base_hash", "content_hash", "author", "source")


def _receipt(record: dict) -> WriteReceipt | None:
    """A line as a receipt; a line of another shape (hand-edited, older) is no receipt."""
    if not all(isinstance(record.get(k), str) for k in _FIELDS if k != "base_hash"):
        return None
    base = record.get("base_hash")
    if base is not None and not isinstance(base, str):
        return None
    return WriteReceipt(path=record["path"], base_hash=base,
                        content_hash=record["content_hash"], author=record["author"],
                        source=record["source"])


class JsonlWriteReceipts(WriteReceipts):
    """Shared by every process on this state folder: a CLI edit knows the last CLI edit."""

    def __init__(self, state_dir: str | os.PathLike[str]):
        self._file = JsonlFile(Path(state_dir) / "write-receipts.jsonl")

    @property
    def path(self) -> Path:
        return self._file.path

    def record(self, receipt: WriteReceipt) -> None:
        self._file.append({k: getattr(receipt, k) for k in _FIELDS})

    def made(self, content_hash: str) -> WriteReceipt | None:
        found = self._file.last(lambda r: r.get("content_hash") == content_hash
                                and _receipt(r) is not None)
        return None if found is None else _receipt(found)
