"""Refresh states are enums: built from the words reports and histories hold, compared by
member, and written back as the same words."""

import json

import pytest

from memory.domain.freshness import Freshness
from memory.domain.refresh import (ASKED_MODES, RefreshMode, RefreshReport, Stage, StageOutcome,
                                   StageReport)


def test_a_stage_report_takes_the_words_a_history_holds_and_writes_them_back():
    stage = StageReport(stage="index", outcome="kept-last-good", reason="checks failed")
    assert stage.stage is Stage.INDEX and stage.outcome is StageOutcome.KEPT_LAST_GOOD
    report = RefreshReport(mode="paths", stages=(stage,))
    assert report.mode is RefreshMode.PATHS and report.stage(Stage.INDEX) is stage
    data = json.loads(json.dumps(report.as_dict()))
    assert data["mode"] == "paths" and data["ok"] is False
    assert data["stages"][0]["stage"] == "index"
    assert data["stages"][0]["outcome"] == "kept-last-good"


def test_an_unknown_state_is_refused_where_it_is_built():
    with pytest.raises(ValueError):
        StageReport(stage="index", outcome="publishd")
    with pytest.raises(ValueError):
        StageReport(stage="vectors", outcome="published")


@pytest.mark.parametrize(("outcome", "ok", "current"), [
    (StageOutcome.PUBLISHED, True, True), (StageOutcome.UNCHANGED, True, True),
    (StageOutcome.SKIPPED, True, False), (StageOutcome.KEPT_LAST_GOOD, False, False)])
def test_what_each_outcome_means(outcome, ok, current):
    assert outcome.ok is ok and outcome.serves_current is current
    assert RefreshReport(mode="index", stages=(
        StageReport(stage="index", outcome=outcome),)).ok is ok


def test_a_caller_asks_only_for_index_or_full():
    assert [m.value for m in ASKED_MODES] == ["index", "full"]
    assert "graph" not in ASKED_MODES and "paths" not in ASKED_MODES


def test_freshness_words_are_those_of_the_packet():
    assert [f.value for f in Freshness] == ["current", "refreshed-before-search", "stale",
                                            "not-indexed"]
