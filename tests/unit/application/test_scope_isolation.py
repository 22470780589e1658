"""Guarantee 6: no search result, and no ranked candidate, ever falls outside the requested
root_scope / repository / project / ticket / status / path_prefix.

Roots and filters are generated; what a filter admits is decided by an oracle written from
the generated note specs (repository and project filters also admit cross-cutting notes),
independently of ScopeFilter, which is checked to agree with it.
"""

from __future__ import annotations

import os
from collections import Counter

from builders import World, make_doc
from figures import printed_at_teardown
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scoped_notes import Spec, admitted, filters, queries, roots

from memory.domain.scope import ScopeFilter, StatusFilter

EXAMPLES = int(os.environ.get("AI_MEMORY_HYPOTHESIS_EXAMPLES", "150"))


SEEN: Counter = Counter()


figures = printed_at_teardown("scope-isolation", SEEN)


def world_of(notes: list[Spec], default_repository: str | None) -> World:
    docs = [make_doc(s.path, s.body, memory_id=s.memory_id, status=s.status,
                     root_scope=s.root_scope, related_repos=s.related_repos,
                     related_projects=s.related_projects, superseded_by=s.superseded_by)
            for s in notes]
    default = (lambda: (default_repository, "test")) if default_repository else None
    world = World(docs, default_repository=default)
    assert world.refresh("full").ok
    SEEN["roots"] += 1
    SEEN["notes"] += len(notes)
    return world


def leaks(world: World, notes: list[Spec], query: str, flt: dict) -> list[str]:
    by_id = {s.memory_id: s for s in notes}
    packet = world.service.search(query, limit=50, **flt)
    scope = packet.scope.filters
    for name in ("repository", "project", "ticket", "root_scope", "status"):
        if flt.get(name) and name != "status":  # an explicit filter is never dropped
            assert scope.get(name), (name, scope)
    out = [f"returned {i.path} outside {scope}" for i in packet.items
           if not admitted(by_id[i.memory_id], scope)]
    explained = world.service.explain(query, limit=50, **flt)
    SEEN["searches"] += 2
    SEEN["results checked"] += len(packet.items) + len(explained.candidates)
    out += [f"ranked {c.path} outside {scope}" for c in explained.candidates
            if not admitted(by_id[c.memory_id], scope)]
    return out


HYPOTHESIS = settings(max_examples=EXAMPLES, deadline=None, database=None,
                      suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@HYPOTHESIS
@given(notes=roots(), cases=st.lists(st.tuples(queries, filters), min_size=1, max_size=6),
       default=st.sampled_from([None, None, "api", "web"]))
def test_no_result_falls_outside_the_requested_scope(notes, cases, default):
    world = world_of(notes, default)
    for query, flt in cases:
        assert leaks(world, notes, query, flt) == []


@HYPOTHESIS
@given(notes=roots(), flt=filters)
def test_the_oracle_and_scope_filter_agree(notes, flt):
    """The oracle is the written rule; ScopeFilter.admits must say the same."""
    world = world_of(notes, None)
    scope = ScopeFilter(status=StatusFilter.parse(flt.get("status")),
                        **{k: v for k, v in flt.items() if k != "status"})
    described = scope.describe()
    for spec in notes:
        note = world.chunks.note(spec.memory_id)
        assert scope.admits(note) == admitted(spec, described), (spec, described)
