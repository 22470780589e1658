"""ScopeNames: a repository, project or ticket no note names is said so, with close names."""

from memory.domain.notes import Note
from memory.domain.scope import ScopeFilter, ScopeNames


def note(**kw):
    base = dict(memory_id="n", path="Repos/alpha/x.md", title="x")
    base.update(kw)
    return Note(**base)


NAMES = ScopeNames.of([
    note(repository="payments-api", ticket="PAY-142"),
    note(repository="ledger", project="billing", related_repos=("payments-web",)),
    note(project="onboarding"),
])


def test_the_names_notes_give_are_known_and_a_known_name_warns_nothing():
    assert NAMES.repositories == {"payments-api", "payments-web", "ledger"}
    assert NAMES.projects == {"billing", "onboarding"} and NAMES.tickets == {"PAY-142"}
    assert NAMES.unmatched(ScopeFilter(repository="Payments-API", project="billing",
                                       ticket="pay-142")) == ()
    assert NAMES.unmatched(ScopeFilter(path_prefix="Nowhere/")) == ()


def test_a_typo_names_the_closest_known_names():
    [warning] = NAMES.unmatched(ScopeFilter(repository="payment-api"))
    assert warning.startswith("scope matches no note: no note has repository 'payment-api'")
    assert "closest: payments-api, payments-web" in warning
    assert "only notes that apply everywhere were searched" in warning
    [ticket] = NAMES.unmatched(ScopeFilter(ticket="PAY-143"))
    assert "ticket 'PAY-143'" in ticket and "closest: PAY-142" in ticket


def test_a_name_close_to_nothing_lists_some_known_ones_and_each_field_is_said():
    warnings = NAMES.unmatched(ScopeFilter(repository="zzzz", project="qqqq"))
    assert len(warnings) == 2
    assert "memory knows 3, e.g. ledger, payments-api, payments-web" in warnings[0]
    assert "project 'qqqq'" in warnings[1]
    [none] = ScopeNames().unmatched(ScopeFilter(ticket="ABC-1"))
    assert "no note names any ticket" in none


def test_a_mention_is_of_a_ticket_only_when_a_note_owns_it():
    text = "The storm was PAY-142; ADR-007 decided the backoff, per ISO-8601."
    assert NAMES.tickets_in(text) == ("PAY-142",)
    for ticket in NAMES.tickets_in(text):  # each is one the ticket scope finds
        assert NAMES.unmatched(ScopeFilter(ticket=ticket)) == ()
