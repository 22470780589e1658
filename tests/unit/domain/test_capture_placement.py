"""Where a write's scope puts a note, and the memory_id it gets."""

import pytest

from memory.domain.note_scope import scope_from_path
from memory.domain.errors import InvalidRequest
from memory.domain.notes import ScopeKind
from memory.domain.placement import ScopeKey, WriteScope, derive_memory_id


@pytest.mark.parametrize("scope, folder", [
    ({"repository": "Payments-API"}, "Repos/payments-api/Notes"),
    ({"repository": "payments-api", "ticket": "pay-1234"},
     "Repos/payments-api/Tickets/PAY-1234/Notes"),
    ({"project": "Checkout-V2"}, "Projects/checkout-v2/Notes"),
    ({"kind": "decision"}, "Decisions"), ({"kind": "tool"}, "Tools"),
    ({"kind": "Workflow"}, "Workflows"), ({"kind": "reference"}, "References"),
    ({"kind": "person"}, "People"), ({"kind": "area"}, "Areas"),
])
def test_each_scope_has_the_folder_of_the_root_conventions(scope, folder):
    assert WriteScope.parse(**scope).folder == folder


@pytest.mark.parametrize("scope", [
    {"repository": "payments-api"}, {"repository": "payments-api", "ticket": "PAY-1"},
    {"project": "checkout"}, {"kind": "decision"}, {"kind": "workflow"}, {"kind": "person"},
])
def test_the_folder_reads_back_as_the_same_scope(scope):
    parsed = WriteScope.parse(**scope)
    assert ScopeKey.of_path(parsed.place("Some title")) == parsed.key


@pytest.mark.parametrize("scope, message", [
    ({"ticket": "PAY-1"}, "needs its repository"),
    ({"project": "x", "ticket": "PAY-1"}, "needs its repository"),
    ({"repository": "a", "project": "b"}, "one scope"),
    ({"repository": "a", "kind": "decision"}, "one scope"),
    ({"kind": "meeting"}, "kind must be one of"),
    ({"repository": "a/b"}, "short key"), ({"repository": "../x"}, "short key"),
    ({"repository": "con"}, "short key"), ({"repository": "a b"}, "short key"),
    ({"repository": "api", "ticket": "not a ticket"}, "tracker id"),
    ({"repository": 5}, "short key"),
])
def test_bad_scopes_are_refused(scope, message):
    with pytest.raises(InvalidRequest, match=message):
        WriteScope.parse(**scope)


def test_no_scope_is_none_so_the_caller_can_ask_for_a_path():
    assert WriteScope.parse() is None
    assert WriteScope.parse(repository="", kind=None) is None


def test_primary_scope_names_the_kind_and_id_the_parser_expects():
    assert WriteScope.parse(repository="api").primary_scope == {"kind": "repo", "id": "api"}
    assert WriteScope.parse(repository="api", ticket="ab-12").primary_scope == \
        {"kind": "ticket", "id": "AB-12"}
    # Workflows are reference notes to the index, as their folder says.
    assert WriteScope.parse(kind="workflow").primary_scope == {"kind": "reference"}
    assert scope_from_path("Workflows/x.md").kind is ScopeKind.REFERENCE


def test_memory_ids_are_scope_and_title_and_unique():
    repo = WriteScope.parse(repository="payments-api").key
    assert derive_memory_id("Idempotent retries", repo, set()) == \
        "payments-api-idempotent-retries"
    assert derive_memory_id("Payments-API timeouts", repo, set()) == "payments-api-timeouts"
    taken = {"payments-api-idempotent-retries", "payments-api-idempotent-retries-2"}
    assert derive_memory_id("Idempotent retries", repo, taken) == \
        "payments-api-idempotent-retries-3"
    ticket = WriteScope.parse(repository="api", ticket="PAY-7").key
    assert derive_memory_id("Root cause", ticket, set()) == "pay-7-root-cause"
    assert derive_memory_id("Use Postgres", WriteScope.parse(kind="decision").key, set()) == \
        "decision-use-postgres"
    assert derive_memory_id("Loose", ScopeKey(), set()) == "loose"


def test_long_titles_give_bounded_ids():
    repo = WriteScope.parse(repository="api").key
    assert len(derive_memory_id("word " * 200, repo, set())) <= 120
