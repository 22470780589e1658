"""The whole search flow on in-memory adapters: scope, fusion, rerank, dedup, evidence."""

import pytest

from builders import World, make_doc

from memory.application.search.config import GatherConfig, SearchConfig
from memory.domain.citing import ContextConfig
from memory.domain.errors import InvalidRequest
from memory.domain.fusion import FusionConfig
from memory.domain.selection import SelectConfig


def corpus():
    return [
        make_doc("Repos/alpha/Tickets/ALPHA-142/Retry Decision.md",
                 "# Retry Decision\n\nWe retry the payment webhook three times with backoff.\n"
                 "The retry budget is 30 seconds.\n", title="Retry Decision"),
        make_doc("Repos/alpha/Notes/Deploy.md",
                 "# Deploy\n\nDeploy alpha with the blue green script.\nRun scripts/deploy.sh first.\n"),
        make_doc("Repos/beta/Notes/Retry.md",
                 "# Retry\n\nRetry retry retry payment webhook retry budget retry backoff.\n"),
        make_doc("Decisions/Logging.md",
                 "# Logging\n\nAll services log JSON lines to stdout.\n"),
        make_doc("Repos/alpha/Notes/Old Cache.md",
                 "# Old cache\n\nThe cache TTL is 5 minutes.\n", status="superseded",
                 memory_id="old-cache"),
        make_doc("Repos/alpha/Notes/Cache.md",
                 "# Cache\n\nThe cache TTL is 10 minutes since March.\n",
                 memory_id="cache", supersedes=("old-cache",)),
        make_doc("Repos/alpha/Notes/Errors.md",
                 "# Errors\n\nWhen launching you may see NX-401: token expired in the launcher.\n"
                 "Fix it with scripts/launch-hidden.vbs which refreshes the token.\n"),
    ]


@pytest.fixture
def world():
    w = World(corpus())
    report = w.refresh("full")
    assert report.ok, report
    return w


def paths(packet):
    return [i.path for i in packet.items]


def test_scope_filters_before_ranking(world):
    everywhere = world.service.search("retry payment webhook budget backoff")
    assert paths(everywhere)[0] == "Repos/beta/Notes/Retry.md"  # best match overall
    scoped = world.service.search("retry payment webhook budget backoff", repository="alpha")
    assert "Repos/beta/Notes/Retry.md" not in paths(scoped)
    assert paths(scoped)[0] == "Repos/alpha/Tickets/ALPHA-142/Retry Decision.md"


def test_a_scope_no_note_has_is_said_with_the_closest_names(world):
    packet = world.service.search("retry payment webhook", repository="alpah")
    hint = [w for w in packet.warnings if w.startswith("scope matches no note: ")]
    assert hint and "repository 'alpah'" in hint[0] and "closest: alpha" in hint[0], packet
    ticket = world.service.search("retry budget", ticket="ALPHA-143")
    assert any("ticket 'ALPHA-143'" in w and "closest: ALPHA-142" in w
               for w in ticket.warnings), ticket.warnings
    assert any(w.startswith("scope matches no note: ") for w in world.service.explain(
        "retry", project="nonexistent").warnings)
    known = world.service.search("retry payment webhook", repository="alpha", ticket="ALPHA-142")
    assert not any(w.startswith("scope matches no note") for w in known.warnings)
    assert not any(w.startswith("scope matches no note")
                   for w in world.service.search("retry payment webhook").warnings)


def test_scope_limit_is_filled_from_inside_the_scope(world):
    scoped = world.service.search("retry cache deploy logging webhook", repository="alpha", limit=3)
    assert len(scoped.items) == 3
    assert all(not p.startswith("Repos/beta/") for p in paths(scoped))


def test_ticket_id_in_query_is_resolved_and_ranks_the_ticket_first(world):
    packet = world.service.search("what did we decide for ALPHA-142 about backoff")
    assert packet.scope.query_tickets == ("ALPHA-142",)
    assert paths(packet)[0] == "Repos/alpha/Tickets/ALPHA-142/Retry Decision.md"
    assert any(r.startswith("ticket:") for r in packet.items[0].reasons)


@pytest.mark.parametrize("fusion", ["score", "rrf"])
def test_bonus_points_weigh_the_same_under_either_fusion(fusion):
    """A ticket named in the query wins over a note that leads the lexical list on another
    word ("alpha"): bonus points are scaled to what leading a list is worth."""
    w = World(corpus(), config=SearchConfig(fusion=FusionConfig(method=fusion)))
    w.refresh("full")
    packet = w.service.search("what did we decide for ALPHA-142 about backoff")
    assert paths(packet)[0] == "Repos/alpha/Tickets/ALPHA-142/Retry Decision.md"
    first, second = packet.items[0], packet.items[1]
    assert {"identifier:ALPHA-142", "ticket:ALPHA-142"} <= set(first.reasons)
    assert first.score > second.score
    assert w.service.explain("ALPHA-142").fusion == fusion


def test_an_unknown_fusion_is_refused():
    with pytest.raises(ValueError, match="method"):
        FusionConfig(method="max")


def test_explicit_ticket_filter_admits_only_that_ticket(world):
    packet = world.service.search("retry", ticket="alpha-142")
    assert paths(packet) == ["Repos/alpha/Tickets/ALPHA-142/Retry Decision.md"]


def test_superseded_notes_hidden_unless_status_asks(world):
    default = world.service.search("cache TTL minutes")
    assert "Repos/alpha/Notes/Old Cache.md" not in paths(default)
    assert "Repos/alpha/Notes/Cache.md" in paths(default)
    historic = world.service.search("cache TTL minutes", status="superseded")
    assert paths(historic) == ["Repos/alpha/Notes/Old Cache.md"]
    both = world.service.search("cache TTL minutes", status="any")
    assert paths(both)[0] == "Repos/alpha/Notes/Cache.md"  # supersession penalty


def test_exact_identifier_bonus_puts_the_identifier_first(world):
    packet = world.service.search("NX-401")
    assert paths(packet)[0] == "Repos/alpha/Notes/Errors.md"
    assert "identifier:NX-401" in packet.items[0].reasons
    path_query = world.service.search("scripts/launch-hidden.vbs")
    assert paths(path_query)[0] == "Repos/alpha/Notes/Errors.md"


def test_no_answer_for_an_unrelated_query(world):
    packet = world.service.search("quantum chromodynamics lattice gluon")
    assert packet.no_answer is True
    assert packet.items == ()


def test_evidence_spans_point_exactly_at_the_cited_text(world):
    packet = world.service.search("blue green script")
    item = packet.items[0]
    lines = world.source.load(item.path).lines
    assert item.text == "\n".join(lines[item.start_line - 1:item.end_line])
    assert "blue green" in item.text
    assert item.signals.lexical == 1


def test_rrf_order_combines_lists():
    docs = [make_doc(f"Decisions/N{i}.md", f"# N{i}\n\nalpha bravo {'charlie ' * i}\n")
            for i in range(1, 5)]
    w = World(docs, config=SearchConfig(gather=GatherConfig(use_semantic=False, use_graph=False)))
    w.refresh("index")
    packet = w.service.search("charlie")
    scores = [i.score for i in packet.items]
    assert scores == sorted(scores, reverse=True)
    assert paths(packet)[0] == "Decisions/N4.md"  # most charlies ranks first lexically


def test_dedup_gives_one_item_per_note_first():
    body = "# Big\n\n" + "\n".join(f"zebra fact number {i}" for i in range(40))
    docs = [make_doc("Decisions/Big.md", body), make_doc("Decisions/Small.md", "# Small\n\nzebra\n")]
    w = World(docs, config=SearchConfig(select=SelectConfig(diversify=True)))
    w.refresh("index")
    packet = w.service.search("zebra fact", limit=2)
    assert sorted(paths(packet)) == ["Decisions/Big.md", "Decisions/Small.md"]
    more = w.service.search("zebra fact", limit=4)
    big = [i for i in more.items if i.path == "Decisions/Big.md"]
    assert len(big) >= 2
    spans = sorted((i.start_line, i.end_line) for i in big)
    assert all(a[1] < b[0] for a, b in zip(spans, spans[1:]))  # never overlapping


def test_context_budget_is_respected():
    body = "# Notes\n\n" + "\n".join(f"line {i} " + "word " * 30 for i in range(60))
    w = World([make_doc("Decisions/Long.md", body, window=2, overlap=0)],
              config=SearchConfig(context=ContextConfig(budget_chars=400, max_item_lines=50)))
    w.refresh("index")
    packet = w.service.search("line 30 word")
    item = packet.items[0]
    assert item.end_line - item.start_line + 1 <= 2  # no room to expand past the chunk
    roomy = World([make_doc("Decisions/Long.md", body, window=2, overlap=0)],
                  config=SearchConfig(context=ContextConfig(budget_chars=100_000,
                                                            max_item_lines=12)))
    roomy.refresh("index")
    wide = roomy.service.search("line 30 word").items[0]
    assert wide.end_line - wide.start_line + 1 == 12


def test_invalid_input_is_refused(world):
    with pytest.raises(InvalidRequest):
        world.service.search("")
    with pytest.raises(InvalidRequest):
        world.service.search("x", limit=-1)
    with pytest.raises(InvalidRequest):
        world.service.search("x" * 3000)
    with pytest.raises(InvalidRequest):
        world.service.search("x", status="bogus")
    with pytest.raises(InvalidRequest):
        world.service.search("x", path_prefix="../etc")


def test_default_repository_is_inferred_but_explicit_wins():
    w = World(corpus(), default_repository=lambda: ("alpha", "git remote"))
    w.refresh("full")
    packet = w.service.search("retry payment webhook budget backoff")
    assert packet.scope.repository == "alpha"
    assert packet.scope.inferred == {"repository": "git remote"}
    assert "Repos/beta/Notes/Retry.md" not in paths(packet)
    assert "Decisions/Logging.md" in paths(w.service.search("log JSON lines stdout"))
    explicit = w.service.search("retry payment webhook budget backoff", repository="beta")
    assert paths(explicit)[0] == "Repos/beta/Notes/Retry.md"
    assert explicit.scope.inferred == {}


def standups():
    return [make_doc(f"Projects/Ops/standup-{day}.md",
                     f"# Standup {day}\n\nThe deploy of the billing service was discussed.\n",
                     created=f"2024-03-{day}") for day in ("04", "11", "18")]


def test_a_question_bounded_in_time_ranks_the_notes_dated_within_it_first():
    w = World(standups())
    w.refresh("full")
    for day in ("4", "11", "18"):
        packet = w.service.search(f"billing deploy on {day} March 2024")
        assert packet.items[0].path == f"Projects/Ops/standup-{int(day):02d}.md"
        assert "in-period" in packet.items[0].reasons
    unbounded = w.service.search("billing deploy")
    assert not any("in-period" in i.reasons for i in unbounded.items)


def test_each_item_carries_and_shows_its_note_date():
    from memory.entrypoints.presenters import packet_text
    w = World(standups())
    w.refresh("full")
    packet = w.service.search("billing deploy")
    assert {i.date for i in packet.items} == {"2024-03-04", "2024-03-11", "2024-03-18"}
    assert f"dated {packet.items[0].date}" in packet_text(packet)


def network():
    return [make_doc("References/network.md",
                     "# Network layout\n\n| VPC | IP Range |\n|---|---|\n"
                     "| staging-eu | 10.30.0.0/16 |\n| prod-eu | 10.20.0.0/16 |\n"),
            make_doc("Workflows/certificates.md",
                     "# Certificates\n\nIngress certificates renew on their own.\n")]


def test_a_name_the_notes_word_differently_is_answered_when_they_cover_the_question():
    w = World(network())
    w.refresh("full")
    packet = w.service.search("What is the CIDR block of the staging VPC?")
    assert not packet.no_answer
    assert packet.items[0].path == "References/network.md"


def test_a_name_that_is_the_subject_memory_never_mentions_still_has_no_answer():
    w = World(network())
    w.refresh("full")
    packet = w.service.search("How do we rotate the Kafka broker TLS keystore?")
    assert packet.no_answer and "Kafka" in packet.no_answer_reason


def _returned(explained):
    return [c for c in explained.candidates if c.returned]


def test_explain_marks_returned_exactly_the_candidates_search_returns_items_for():
    # The second window (L9-L12) ranks first and its item grows up over the first window
    # (L1-L6): search gives no item for the first, so explain must not mark it returned.
    swallowed = ("# Retry\n\nbudget webhook\nplain text\nplain text\nwebhook\n\n\n"
                 "retry retry budget\nretry webhook budget\nwebhook retry\nretry budget")
    w = World([make_doc("Notes/Retry.md", swallowed),
               make_doc("Notes/Other.md", "# Other\n\nretry elsewhere.\n")])
    assert w.refresh("full").ok
    packet = w.service.search("retry budget webhook")
    explained = w.service.explain("retry budget webhook")
    assert len(_returned(explained)) == len(packet.items), (explained.candidates, packet.items)
    assert {c.path for c in _returned(explained)} == {i.path for i in packet.items}
    assert w.service.explain("retry budget webhook", identity="Notes/Other.md").identity.returned


def test_explain_lists_every_returned_candidate_even_below_the_limit_it_ranks():
    # Two windows of one note overlap, so search's items come from further down the ranking
    # than `limit`; explain still lists (and marks) each one search returns.
    notes = [make_doc(f"Notes/N{n}.md", "# N\n\n" + "\n".join(
        f"retry budget webhook line {i}" for i in range(14)) + "\n") for n in range(3)]
    w = World([*notes, make_doc("Notes/Weak.md", "# Weak\n\nretry once.\n")])
    assert w.refresh("full").ok
    packet = w.service.search("retry budget webhook", limit=4)
    explained = w.service.explain("retry budget webhook", limit=4)
    assert len(_returned(explained)) == len(packet.items)
    assert sorted(c.path for c in _returned(explained)) == sorted(i.path for i in packet.items)
