"""The outcome step: a leading note's Decision (Resolution, Fix, ...) section follows the
note's best match; notes keep their order."""

import pytest

from memory.domain.candidates import Candidate
from memory.domain.notes import Chunk, Note
from memory.domain.outcome_sections import OutcomeSections


def candidate(note: str, heading: str, start: int, score: float) -> Candidate:
    chunk = Chunk.create(memory_id=note, path=f"{note}.md", heading=heading, start_line=start,
                         end_line=start + 3, text=f"{heading} text of {note}", ordinal=start)
    return Candidate(chunk=chunk, note=Note(memory_id=note, path=f"{note}.md", title=note),
                     fused=score, lexical_rank=1)


def order(ranked):
    return [(c.note.memory_id, c.chunk.heading) for c in ranked]


# A decision record whose long Context and Consequences sections share the question's words
# and whose two-line Decision section does not, then two other notes.
ADR = "ADR 4: Regions"
CONTEXT = candidate("adr", f"{ADR} > Context", 7, 1.0)
OTHER = candidate("other", "Runbook > Failover", 1, 0.9)
CONSEQUENCES = candidate("adr", f"{ADR} > Consequences", 40, 0.8)
THIRD = candidate("third", "Notes", 1, 0.7)
DECISION = candidate("adr", f"{ADR} > Decision", 31, 0.3)
RANKED = (CONTEXT, OTHER, CONSEQUENCES, THIRD, DECISION)


def test_the_decision_section_follows_its_notes_best_match_at_its_score():
    lifted = OutcomeSections().lift(RANKED)
    assert order(lifted)[:3] == [("adr", f"{ADR} > Context"), ("adr", f"{ADR} > Decision"),
                                 ("other", "Runbook > Failover")]
    moved = lifted[1]
    assert moved.score == CONTEXT.score and "outcome-section" in moved.reasons


def test_notes_keep_their_order():
    lifted = OutcomeSections().lift(RANKED)
    firsts = list(dict.fromkeys(c.note.memory_id for c in lifted))
    assert firsts == ["adr", "other", "third"]
    assert len(lifted) == len(RANKED)


def test_a_note_past_the_first_ones_is_left_alone():
    late = candidate("third", "Notes > Resolution", 9, 0.2)
    ranked = (*RANKED, late)
    assert OutcomeSections(top=2).lift(ranked)[-1] is late
    assert order(OutcomeSections(top=3).lift(ranked))[-2:] == [
        ("third", "Notes"), ("third", "Notes > Resolution")]


def test_nothing_changes_without_an_outcome_section():
    ranked = (CONTEXT, OTHER, CONSEQUENCES, THIRD)
    assert OutcomeSections().lift(ranked) == ranked


def test_a_best_match_that_is_the_outcome_section_stays_where_it_is():
    ranked = (DECISION, OTHER, CONTEXT)
    assert OutcomeSections().lift(ranked) == ranked


@pytest.mark.parametrize("heading", [
    "Decision", "ADR 7 > Decision", "Decision Outcome", "3. Resolution", "Fix", "TL;DR",
    "Summary", "Workaround:", "Décision > Solution", "Root Cause", "Post-mortem > Root cause"])
def test_outcome_headings(heading):
    assert OutcomeSections().states_outcome(heading)


@pytest.mark.parametrize("heading", [
    "", "Context", "Consequences", "Architecture Decision Record 15: EKS worker node AMI",
    "Decisions we made about the office move last year", "Decision > Context",
    "How we fix flaky tests", "Alternatives Considered", "Root access"])
def test_other_headings(heading):
    assert not OutcomeSections().states_outcome(heading)


def chunk_of(note: str, heading: str, start: int) -> Chunk:
    return Chunk.create(memory_id=note, path=f"{note}.md", heading=heading, start_line=start,
                        end_line=start + 1, text=f"{heading} lines", ordinal=start)


def test_an_outcome_section_no_list_returned_is_read_from_the_leading_notes_chunks():
    ranked = (CONTEXT, OTHER, CONSEQUENCES, THIRD)  # the Decision chunk was in no list
    sections = {"adr": (chunk_of("adr", f"{ADR} > Context", 7),
                        chunk_of("adr", f"{ADR} > Decision", 31)),
                "other": (chunk_of("other", "Runbook > Fix", 20),)}
    lifted = OutcomeSections(top=1).lift(ranked, sections)
    assert order(lifted)[:3] == [("adr", f"{ADR} > Context"), ("adr", f"{ADR} > Decision"),
                                 ("other", "Runbook > Failover")]
    assert lifted[1].score == CONTEXT.score and lifted[1].note is CONTEXT.note
    assert ("other", "Runbook > Fix") not in order(lifted)  # not a leading note at top=1
    assert len(lifted) == len(ranked) + 1


def test_a_section_that_is_already_a_candidate_is_not_added_twice():
    sections = {"adr": (DECISION.chunk,)}
    lifted = OutcomeSections().lift(RANKED, sections)
    assert [c.chunk.chunk_id for c in lifted].count(DECISION.chunk.chunk_id) == 1


def test_the_leading_notes_are_the_first_distinct_notes():
    assert OutcomeSections(top=2).leading(RANKED) == ("adr", "other")


def test_a_section_ranked_past_the_window_moves_up_and_is_not_left_behind_twice():
    ranked = (CONTEXT, OTHER, DECISION)
    lifted = OutcomeSections(window=2).lift(ranked, {"adr": (DECISION.chunk,)})
    assert order(lifted) == [("adr", f"{ADR} > Context"), ("adr", f"{ADR} > Decision"),
                             ("other", "Runbook > Failover")]
