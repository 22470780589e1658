"""The refresh history a server's own refreshes write: only what changed something."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memory.domain.refresh import StageOutcome
from memory.ports.journal import RefreshHistory


class ChangesOnlyHistory(RefreshHistory):
    """The refresh history as the server's own refreshes write it: only when they changed
    something. Several servers noticing the same edit leave one record, not one each."""

    def __init__(self, history: RefreshHistory):
        self._history = history

    def append(self, record: Mapping[str, Any]) -> None:
        if any(stage.get("outcome") != StageOutcome.UNCHANGED for stage in record.get("stages", ())):
            self._history.append(record)

    def last(self) -> Mapping[str, Any] | None:
        return self._history.last()
