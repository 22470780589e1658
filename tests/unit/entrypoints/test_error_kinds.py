"""One table of error kinds for both edges: the kind an MCP tool error names is the kind the
command line prints, with the command line's exit code."""

import pytest

from memory.domain.cancellation import Cancelled
from memory.domain.capture_errors import DuplicateKnowledge, SecretInNote
from memory.domain.errors import AiMemoryError, InvalidRequest, NotFound, NotInstalled, RefreshBusy
from memory.entrypoints.error_kinds import KINDS, kind_of
from memory.ports.errors import StoreError, StoreUnsupported


@pytest.mark.parametrize(("error", "kind", "code"), [
    (DuplicateKnowledge(()), "duplicate", 2),
    (SecretInNote(()), "secret refused", 2),
    (InvalidRequest("limit must be 1-50"), "invalid request", 2),
    (NotFound("no note Foo.md"), "not found", 3),
    (RefreshBusy("another refresh holds the lock"), "busy", 4),
    (Cancelled("stopped"), "cancelled", 1),
    (NotInstalled("pip install 'ai-memory-notes[postgres]'"), "not installed", 1),
    (StoreUnsupported("pgvector 0.6.2; ai-memory needs 0.8"), "unsupported", 1),
    (StoreError("postgres store failed"), "error", 1),
    (AiMemoryError("something else"), "error", 1),
    (OSError("disk full"), "error", 1)])
def test_each_error_has_its_kind_and_exit_code(error, kind, code):
    assert kind_of(error) == (kind, code)


def test_a_more_specific_error_is_listed_before_the_one_it_refines():
    for i, (narrow, _, _) in enumerate(KINDS):
        for wide, _, _ in KINDS[:i]:
            assert not issubclass(narrow, wide), f"{narrow.__name__} is shadowed by {wide.__name__}"
