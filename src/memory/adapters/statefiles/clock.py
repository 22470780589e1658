"""SystemClock: the real wall clock and monotonic timer."""

from __future__ import annotations

import time
from datetime import datetime, timezone

from memory.ports.clock import Clock


class SystemClock(Clock):
    def now_iso(self) -> str:
        """Current UTC time like 2024-05-02T10:00:00+00:00."""
        return datetime.now(timezone.utc).isoformat(timespec="seconds")

    def monotonic(self) -> float:
        return time.monotonic()
