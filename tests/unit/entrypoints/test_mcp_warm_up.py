"""The stdio server's warm-up logs a failure on purpose (an AiMemoryError: an old pgvector,
a store that cannot be opened) as its kind and words, and only a bug with its traceback."""

from __future__ import annotations

import logging

from memory.entrypoints.mcp_server import _WarmUp
from memory.ports.errors import StoreUnsupported


def _warm_up_log(caplog, error: Exception) -> logging.LogRecord:
    def warm() -> None:
        raise error
    with caplog.at_level(logging.WARNING, logger="memory.mcp"):
        _WarmUp(warm)._run()
    [record] = [r for r in caplog.records if "warming up failed" in r.getMessage()]
    return record


def test_a_failure_on_purpose_is_logged_as_its_kind_without_a_traceback(caplog):
    record = _warm_up_log(caplog, StoreUnsupported("pgvector 0.6.2 is installed; ai-memory "
                                                   "needs pgvector 0.8 or newer"))
    assert record.exc_info is None
    assert "unsupported: pgvector 0.6.2 is installed" in record.getMessage()


def test_a_bug_is_logged_with_its_traceback(caplog):
    assert _warm_up_log(caplog, KeyError("model")).exc_info is not None
