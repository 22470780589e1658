"""Guarantee 6 on the real stack: generated roots written as Markdown files, indexed into
SQLite (FTS5 + sqlite-vec) with the real embedder and Graphify; no result and no ranked
candidate falls outside the requested scope. The scope filter is SQL here, so this checks
it against the same written rule the in-memory property test uses.
"""

from __future__ import annotations

import os
from collections import Counter


from figures import printed_at_teardown
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from live_root import LiveRoot
from scoped_notes import admitted, filters, queries, roots

EXAMPLES = int(os.environ.get("AI_MEMORY_REAL_STACK_EXAMPLES", "5"))
SEEN: Counter = Counter()


figures = printed_at_teardown("scope-isolation-real-stack", SEEN)


@settings(max_examples=EXAMPLES, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(notes=roots(), cases=st.lists(st.tuples(queries, filters), min_size=8, max_size=12))
def test_no_result_falls_outside_the_requested_scope_on_the_real_stack(
        tmp_path_factory, embedder, notes, cases):
    root = LiveRoot.create(tmp_path_factory.mktemp("scoped") / "memory",
                           {spec.path: spec.markdown() for spec in notes})
    service = root.service(embedder)
    assert service.refresh("full").ok
    by_id = {spec.memory_id: spec for spec in notes}
    SEEN["roots"] += 1
    SEEN["notes"] += len(notes)
    for query, flt in cases:
        packet = service.search(query, limit=50, **flt)
        scope = packet.scope.filters
        outside = [i.path for i in packet.items if not admitted(by_id[i.memory_id], scope)]
        explained = service.explain(query, limit=50, **flt)
        outside += [c.path for c in explained.candidates
                    if not admitted(by_id[c.memory_id], scope)]
        SEEN["searches"] += 2
        SEEN["results checked"] += len(packet.items) + len(explained.candidates)
        assert outside == [], (query, flt, packet.scope)
