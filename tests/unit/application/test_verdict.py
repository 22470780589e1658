"""The verdict a read gets about its index: typed freshness, and warnings that name the step
to take as an Action."""

from memory.application.refresh.catch_up import CatchUp, CatchUpOutcome
from memory.application.refresh.verdict import (CURRENT, REFRESHED, Verdict, judge, not_indexed,
                                                read_verdict)
from memory.domain.evidence import Generation
from memory.domain.freshness import Freshness
from memory.domain.messages import Action
from memory.domain.refresh import RefreshReport, StageReport

KEPT = RefreshReport(mode="index", stages=(StageReport(stage="index", outcome="kept-last-good"),))


def judged(result: CatchUp, **kw) -> Verdict:
    return judge(result, changed_generation=kw.get("changed", False),
                 watching=kw.get("watching", False), progress=None,
                 background=kw.get("background", True))


def test_nothing_to_do_is_current_or_refreshed_when_another_process_published():
    assert judged(CatchUp(outcome="nothing")) == CURRENT
    assert judged(CatchUp(outcome="nothing"), changed=True) == REFRESHED
    assert CURRENT.freshness is Freshness.CURRENT and CURRENT.warnings == ()


def test_too_many_edits_ask_for_a_refresh_unless_the_background_takes_them():
    left = judged(CatchUp(outcome=CatchUpOutcome.TOO_MANY, changed=300))
    assert left.freshness is Freshness.STALE
    assert left.warnings[0].actions == (Action.REFRESH,)
    assert "300 notes changed" in left.warnings[0]
    taken = judged(CatchUp(outcome="too-many", changed=300), watching=True)
    assert "being indexed in the background" in taken.warnings[0]
    assert not getattr(taken.warnings[0], "actions", ())


def test_big_notes_held_by_a_one_shot_command_are_left_for_a_refresh():
    verdict = judged(CatchUp(outcome="nothing", held=("Notes/Giant.md",)), background=False)
    assert verdict.freshness is Freshness.STALE
    assert verdict.warnings[0].actions == (Action.REFRESH,)
    assert "Notes/Giant.md" in verdict.warnings[0]


def test_a_refresh_that_kept_the_last_good_index_is_stale():
    verdict = judged(CatchUp(outcome="refreshed", report=KEPT, detail="checks failed"))
    assert verdict.freshness is Freshness.STALE and "checks failed" in verdict.warnings[0]


def test_a_read_without_an_index_is_never_current():
    no_index = Generation()
    assert read_verdict(CURRENT, no_index, ["no index"]) == \
        Verdict(freshness=Freshness.NOT_INDEXED, warnings=("no index",))
    built = read_verdict(not_indexed(5), Generation(index="g1"), [])
    assert built == REFRESHED  # built meanwhile: the advice to build it is gone
    said = read_verdict(not_indexed(5), no_index, ["generic"])
    assert said.freshness is Freshness.NOT_INDEXED and said.warnings[0].actions == (
        Action.REFRESH,)


def test_catch_up_outcomes_group_as_the_policy_reads_them():
    assert {o for o in CatchUpOutcome if o.caught_up} == {CatchUpOutcome.NOTHING,
                                                          CatchUpOutcome.REFRESHED}
    assert {o for o in CatchUpOutcome if o.worth_retrying} == {CatchUpOutcome.BUSY,
                                                               CatchUpOutcome.MODEL_LOADING}
