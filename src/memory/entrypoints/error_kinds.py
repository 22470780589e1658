"""What kind of failure an error is, in one table for both edges: the MCP tool error says
`KIND: message`, the command line prints the same kind and exits with its code."""

from __future__ import annotations

from memory.domain.cancellation import Cancelled
from memory.domain.capture_errors import (DuplicateKnowledge, EditConflict, SecretInNote,
                                          SupersedeIncomplete, WriteBusy)
from memory.domain.errors import (AiMemoryError, InvalidRequest, NotFound, NotInstalled,
                                  RefreshBusy, Unavailable)
from memory.ports.errors import StoreUnsupported

# (error type, kind, command-line exit code), most specific first: DuplicateKnowledge and
# SecretInNote are InvalidRequests with kinds of their own.
KINDS: tuple[tuple[type[BaseException], str, int], ...] = (
    (EditConflict, "conflict", 5), (DuplicateKnowledge, "duplicate", 2),
    (SecretInNote, "secret refused", 2), (WriteBusy, "busy", 4),
    (SupersedeIncomplete, "incomplete", 1), (InvalidRequest, "invalid request", 2),
    (NotFound, "not found", 3), (RefreshBusy, "busy", 4), (Unavailable, "unavailable", 1),
    (NotInstalled, "not installed", 1), (Cancelled, "cancelled", 1),
    (StoreUnsupported, "unsupported", 1))
OTHER = ("error", 1)  # any other AiMemoryError, or an OSError on the command line


def kind_of(exc: BaseException) -> tuple[str, int]:
    """(kind, exit code) of an error; ("error", 1) for one the table does not name."""
    return next(((kind, code) for t, kind, code in KINDS if isinstance(exc, t)), OTHER)
