"""In-memory lock, logs, clock and embedding cache."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from contextlib import contextmanager

from memory.domain.cancellation import CancelToken
from memory.domain.errors import RefreshBusy
from memory.ports.clock import Clock
from memory.ports.embedding_cache import EmbeddingCache
from memory.ports.errors import StoreError
from memory.ports.journal import FeedbackLog, RefreshHistory
from memory.ports.lock import RefreshLock


class InMemoryLock(RefreshLock):
    def __init__(self):
        self._lock = threading.Lock()
        self.acquired = 0
        self.attempts = 0  # calls of hold, whether they got the lock or not

    @contextmanager
    def hold(self, timeout: float, cancel: CancelToken | None = None):
        self.attempts += 1
        deadline = time.monotonic() + max(timeout, 0.0)
        while not self._lock.acquire(timeout=min(0.05, max(0.0, deadline - time.monotonic()))):
            if cancel is not None:
                cancel.raise_if_cancelled()
            if time.monotonic() >= deadline:
                raise RefreshBusy("another refresh is running")
        self.acquired += 1
        try:
            yield
        finally:
            self._lock.release()


def _as_written(record: Mapping) -> dict:
    """The record as a JSONL journal would read it back; StoreError where it could not."""
    try:
        return json.loads(json.dumps(dict(record), ensure_ascii=False))
    except (TypeError, ValueError) as exc:
        raise StoreError(f"record is not JSON: {exc}") from exc


class InMemoryFeedbackLog(FeedbackLog):
    def __init__(self):
        self.records: list[dict] = []

    def append(self, record: Mapping) -> None:
        self.records.append(_as_written(record))

    def count(self) -> int:
        return len(self.records)


class InMemoryRefreshHistory(RefreshHistory):
    def __init__(self):
        self.records: list[dict] = []

    def append(self, record: Mapping) -> None:
        self.records.append(_as_written(record))

    def last(self) -> Mapping | None:
        return self.records[-1] if self.records else None


class FixedClock(Clock):
    def __init__(self, now: str = "2026-01-15T12:00:00Z"):
        self.now = now
        self.ticks = 0.0

    def now_iso(self) -> str:
        return self.now

    def monotonic(self) -> float:
        self.ticks += 0.001
        return self.ticks


class InMemoryEmbeddingCache(EmbeddingCache):
    def __init__(self):
        self.vectors: dict[tuple[str, str], Sequence[float]] = {}

    def get_many(self, model_id: str, hashes: Iterable[str]) -> dict[str, Sequence[float]]:
        return {h: self.vectors[(model_id, h)] for h in hashes if (model_id, h) in self.vectors}

    def put_many(self, model_id: str, vectors: Mapping[str, Sequence[float]]) -> None:
        for h, v in vectors.items():
            self.vectors[(model_id, h)] = v
