"""The search as gather -> steps: steps swapped or dropped by configuration, no state kept."""

from attrs import evolve, frozen
from builders import World, make_doc

from memory.application.search.requests import SearchRequest
from memory.application.search.config import SearchConfig
from memory.domain.context import Span
from memory.domain.evidence import Generation


def corpus():
    return [
        make_doc("Repos/api/Notes/Retry.md",
                 "# Retry policy\n\nThe client retries the payment webhook three times.\n"
                 "Backoff doubles each time.\nThe payment webhook limit is in [[Timeouts]].\n",
                 memory_id="retry"),
        make_doc("Repos/api/Notes/Timeouts.md",
                 "# Timeouts\n\nThe gateway cuts calls after 30 seconds.\n",
                 memory_id="timeouts", title="Timeouts"),
        make_doc("Repos/api/Notes/Log.md", "# Log\n\n" + "\n".join(
            f"Entry {n}: the {word} job finished." for n, word in enumerate(
                ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf"), 1)) + "\n",
                 memory_id="log"),
    ]


def world(config: SearchConfig | None = None) -> World:
    w = World(corpus(), config=config)
    assert w.refresh("full").ok
    return w


def reasons(packet) -> set[str]:
    return {r for item in packet.items for r in item.reasons}


def test_dropping_the_hop_step_stops_lifting_linked_notes():
    query = "payment webhook retries backoff"
    assert "linked-from:retry" in reasons(world().service.search(query))
    dropped = world(evolve(SearchConfig(), hop=None)).service.search(query)
    assert not any(r.startswith("linked-from:") for r in reasons(dropped))


def one_line_items(**steps) -> SearchConfig:
    base = SearchConfig()
    return evolve(base, context=evolve(base.context, max_item_lines=1), **steps)


def test_dropping_the_focus_step_starts_items_at_their_chunk():
    centred = world(one_line_items()).service.search("which job was delta").items[0]
    assert centred.text == "Entry 4: the delta job finished."
    plain = world(one_line_items(focus=None)).service.search("which job was delta").items[0]
    assert plain.start_line < centred.start_line and "delta" in plain.text


@frozen
class LastLineFocus:
    """A focus step of a test's own: always the last free line."""

    def focus(self, chunk, free, query):
        return Span(start_line=free[-1], end_line=free[-1])


@frozen
class Penalise:
    """A rerank step of a test's own, wrapping the real one."""

    inner: object
    note: str

    def rerank(self, candidates, query, leader=1.0):
        out = self.inner.rerank(candidates, query, leader)
        return tuple(sorted((c.with_bonus(-10.0, "test") if c.note.memory_id == self.note
                             else c for c in out), key=lambda c: -c.score))


def test_a_step_is_swapped_by_a_value_with_the_same_method():
    base = evolve(SearchConfig(), hop=None)  # the hop would lift the penalised note back
    first = world(base).service.search("payment gateway calls").items[0].memory_id
    swapped = world(evolve(base, rerank=Penalise(base.rerank, first)))
    assert swapped.service.search("payment gateway calls").items[0].memory_id != first
    item = world(one_line_items(focus=LastLineFocus())).service.search("which job was delta")
    assert item.items[0].text == "Entry 6: the foxtrot job finished."


def test_with_config_leaves_the_original_engine_as_it_was():
    w = world()
    lexical = w.engine.with_config(gather=evolve(w.engine.config.gather, use_semantic=False))
    assert lexical.config.gather.use_semantic is False
    assert w.engine.config.gather.use_semantic is True


def test_interleaved_searches_on_one_engine_keep_their_own_evidence():
    """Each search's data travels in its trace: evidence built after another search ran
    cites what the same search cites alone."""
    w = world(one_line_items())
    ask = [SearchRequest.parse(q) for q in ("which job was bravo", "which job was foxtrot")]
    alone = [w.engine.search(r, Generation()).items for r in ask]
    traces = [w.engine.trace(r) for r in ask]
    assert [w.engine.evidence(t) for t in reversed(traces)] == list(reversed(alone))
    assert alone[0][0].citation != alone[1][0].citation


def decision_record_world(config: SearchConfig | None = None) -> World:
    context = "\n".join(f"The failover region for the payment service was discussed in "
                        f"meeting {n}, with its capacity and latency." for n in range(1, 9))
    consequences = "\n".join(f"Failover drill {n} of the payment service runs each quarter, "
                             f"region by region." for n in range(1, 9))
    docs = [make_doc("Decisions/0004-regions.md",
                     f"# ADR 4: Data centres\n\n## Context\n\n{context}\n\n## Decision\n\n"
                     f"Frankfurt is primary; Dublin takes over.\n\n"
                     f"## Consequences\n\n{consequences}\n", memory_id="adr-4"),
            make_doc("Runbooks/failover.md",
                     "# Failover runbook\n\nPage the payment service owner before any "
                     "region failover.\n", memory_id="runbook")]
    w = World(docs, config=config)
    assert w.refresh("full").ok
    return w


def test_the_outcome_step_brings_a_leading_notes_decision_section_into_the_first_items():
    query = "Which failover region does the payment service use?"
    request = dict(limit=3)
    found = decision_record_world().service.search(query, **request).items
    assert any("Frankfurt is primary" in item.text for item in found)
    assert "outcome-section" in {r for item in found for r in item.reasons}
    without = decision_record_world(evolve(SearchConfig(), outcome=None)).service.search(
        query, **request).items
    assert not any("Frankfurt is primary" in item.text for item in without)


def test_the_outcome_section_is_found_even_when_no_provider_list_returned_it():
    """In a big root the Decision chunk's vector is not among the nearest: the step reads the
    leading notes' own chunks (here the lists are cut to two so that nothing returns it)."""
    query = "Which failover region does the payment service use?"
    base = SearchConfig()
    shallow = evolve(base, gather=evolve(base.gather, semantic_depth=2, lexical_depth=2))
    found = decision_record_world(shallow).service.search(query, limit=3).items
    assert any("Frankfurt is primary" in item.text for item in found)
    without = decision_record_world(evolve(shallow, outcome=None)).service.search(
        query, limit=3).items
    assert not any("Frankfurt is primary" in item.text for item in without)
