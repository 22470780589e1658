"""Pure rules: RRF, scope filters, ticket ids, query features, context expansion."""

import pytest
from hypothesis import given, strategies as st

from memory.domain.context import Span, expand_span
from memory.domain.errors import InvalidRequest
from memory.domain.fusion import reciprocal_rank_fusion
from memory.domain.notes import Note, Status
from memory.domain.scope import ScopeFilter, StatusFilter, resolve_scope, ticket_ids_in
from memory.domain.text import QueryFeatures


def test_rrf_scores_and_order():
    fused = reciprocal_rank_fusion({"a": ["x", "y", "z"], "b": ["y", "x"]}, k=60)
    scores = dict(fused)
    assert scores["x"] == pytest.approx(1 / 61 + 1 / 62)
    assert scores["z"] == pytest.approx(1 / 63)
    assert [k for k, _ in fused][:2] == ["x", "y"]  # tie broken by first appearance


def test_rrf_weights_change_the_winner():
    lists = {"lexical": ["a", "b"], "semantic": ["b", "a"]}
    assert reciprocal_rank_fusion(lists, {"lexical": 1.0, "semantic": 0.5})[0][0] == "a"
    assert reciprocal_rank_fusion(lists, {"lexical": 0.5, "semantic": 1.0})[0][0] == "b"


@given(st.lists(st.lists(st.integers(0, 20), max_size=10), max_size=4))
def test_rrf_is_sorted_and_counts_each_key_once_per_list(lists):
    fused = reciprocal_rank_fusion({str(i): l for i, l in enumerate(lists)})
    scores = [s for _, s in fused]
    assert scores == sorted(scores, reverse=True)
    assert all(s <= len(lists) / 61 + 1e-12 for s in scores)


def note(**kw):
    base = dict(memory_id="n", path="Repos/alpha/x.md", title="x", repository="alpha")
    base.update(kw)
    return Note(**base)


def test_scope_filter_rules():
    alpha = note()
    beta = note(repository="beta", path="Repos/beta/x.md")
    cross = note(repository=None, path="Decisions/x.md")
    f = ScopeFilter(repository="Alpha")
    assert f.admits(alpha) and not f.admits(beta) and f.admits(cross)
    assert ScopeFilter(repository="beta").admits(note(related_repos=("BETA",)))
    assert not ScopeFilter(ticket="alpha-1").admits(alpha)
    assert ScopeFilter(ticket="alpha-1").admits(note(ticket="ALPHA-1"))
    assert ScopeFilter(path_prefix="repos/ALPHA").admits(alpha)
    assert not ScopeFilter(root_scope="personal").admits(alpha)


def test_status_filter_and_effective_status():
    superseded = note(superseded_by=("new",))
    assert superseded.effective_status is Status.SUPERSEDED
    assert not ScopeFilter().admits(superseded)
    assert ScopeFilter(status=StatusFilter.SUPERSEDED).admits(superseded)
    assert ScopeFilter(status=StatusFilter.ANY).admits(superseded)
    assert ScopeFilter().admits(note(status=Status.NEEDS_REVIEW))
    with pytest.raises(InvalidRequest):
        StatusFilter.parse("deleted")


@pytest.mark.parametrize("prefix", ["../x", "/etc", "~/x", "C:/x", "a/../../b"])
def test_path_prefix_must_stay_inside_the_root(prefix):
    with pytest.raises(InvalidRequest):
        ScopeFilter(path_prefix=prefix)


def test_ticket_ids_in_query():
    assert ticket_ids_in("fix ALPHA-142 and NX-401, not alpha-1 or A-1") == ("ALPHA-142", "NX-401")
    resolved = resolve_scope("about ALPHA-142", ScopeFilter())
    assert resolved.query_tickets == ("ALPHA-142",)
    assert resolved.filter.ticket is None  # a hint for ranking, not a hard filter


def test_query_features():
    f = QueryFeatures.of('why does "token expired" happen in scripts/launch-hidden.vbs for NX-401?')
    assert "NX-401" in f.identifiers and "scripts/launch-hidden.vbs" in f.paths
    assert f.phrases == ("token expired",)
    assert "why" not in f.terms and "token" in f.terms
    assert QueryFeatures.of("retries of webhooks").coverage("We retry the webhook") == 1.0


def test_expand_span_respects_budgets_headings_and_blocked_lines():
    lines = ["# A", "one", "two", "three", "four", "# B", "five"]
    assert expand_span(Span(start_line=3, end_line=3), lines, 10, 10_000) == Span(start_line=1, end_line=5)
    assert expand_span(Span(start_line=3, end_line=3), lines, 2, 10_000).size == 2
    assert expand_span(Span(start_line=3, end_line=3), lines, 10, 4) == Span(start_line=3, end_line=3)
    blocked = [Span(start_line=4, end_line=5)]
    assert expand_span(Span(start_line=3, end_line=3), lines, 10, 10_000, blocked).end_line == 3
