"""JSONL journals in the state directory: the feedback log and the refresh history."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from memory.adapters.statefiles.jsonl_file import JsonlFile
from memory.ports.journal import FeedbackLog, RefreshHistory


class JsonlFeedbackLog(FeedbackLog):
    """`<state_dir>/feedback.jsonl`, one record per line."""

    def __init__(self, state_dir: str | os.PathLike[str]):
        self._file = JsonlFile(Path(state_dir) / "feedback.jsonl")

    @property
    def path(self) -> Path:
        return self._file.path

    def append(self, record: Mapping) -> None:
        self._file.append(record)

    def count(self) -> int:
        return sum(1 for _ in self._file.records())


class JsonlRefreshHistory(RefreshHistory):
    """`<state_dir>/refresh-history.jsonl`, one finished refresh per line."""

    def __init__(self, state_dir: str | os.PathLike[str]):
        self._file = JsonlFile(Path(state_dir) / "refresh-history.jsonl")

    @property
    def path(self) -> Path:
        return self._file.path

    def append(self, record: Mapping) -> None:
        self._file.append(record)

    def last(self) -> Mapping | None:
        return self._file.last()
