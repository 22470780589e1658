"""Leave-one-conversation-out: settings are chosen on the other folds only, and the noise
bands say what a difference must clear (agreement with score.py: the sibling module)."""

import random

import pytest

from memory.application.evaluation import (Figure, control_band, cross_validate, fold_gains,
                                           sampling_band, split_folds)

KS = [1, 3, 5, 10]


def query(qid: str, project: str, line: int, category: int = 4) -> dict:
    return {"qid": qid, "project": project, "category": category,
            "evidence": [{"path": f"projects/{project}/s.md", "line": line}]}


def hit(project: str, start: int, end: int) -> dict:
    return {"path": f"projects/{project}/s.md", "start_line": start, "end_line": end}


def found(q: dict) -> dict:
    line = q["evidence"][0]["line"]
    return {"qid": q["qid"], "hits": [hit(q["project"], line, line)]}


def missed(q: dict) -> dict:
    return {"qid": q["qid"], "hits": [hit(q["project"], 500, 501)]}


def corpus(projects=("a", "b", "c", "d", "e"), per=4):
    return [query(f"{p}-{i}", p, 10 + i) for p in projects for i in range(per)]


def test_folds_are_the_projects_in_order_and_round_robin_without_one():
    queries = corpus(("x", "y", "z"), 2)
    assert list(split_folds(queries)) == ["x", "y", "z"]
    plain = [{"qid": f"q{i}", "evidence": []} for i in range(7)]
    folds = split_folds(plain, count=5)
    assert [len(v) for v in folds.values()] == [2, 2, 1, 1, 1]
    assert [q["qid"] for q in folds["fold-1"]] == ["q0", "q5"]


def test_a_variant_best_on_the_other_folds_is_scored_on_the_held_out_one():
    queries = corpus()
    # "steady" finds every question of a, b, c, d and none of e; "lucky" finds only e's.
    steady = {q["qid"]: (missed(q) if q["project"] == "e" else found(q)) for q in queries}
    lucky = {q["qid"]: (found(q) if q["project"] == "e" else missed(q)) for q in queries}
    cv = cross_validate(queries, {"steady": steady, "lucky": lucky}, KS)
    chosen = {f.fold: f.chosen for f in cv.folds}
    assert chosen == {p: "steady" for p in "abcde"}  # e alone never decides for e
    assert cv.figure("all", "EH@5").values == (1.0, 1.0, 1.0, 1.0, 0.0)
    assert cv.figure("all", "EH@5").mean == pytest.approx(0.8)


def test_ties_go_to_the_variant_listed_first():
    queries = corpus()
    same = {q["qid"]: found(q) for q in queries}
    cv = cross_validate(queries, {"simple": same, "complex": dict(same)}, KS)
    assert {f.chosen for f in cv.folds} == {"simple"}


def test_figure_spread():
    f = Figure.of([0.5, 1.0, 0.75])
    assert (f.mean, f.low, f.high) == (0.75, 0.5, 1.0)
    assert f.sd == pytest.approx(0.2041, abs=1e-4)


def test_fold_gains_and_control_band():
    queries = corpus()
    base = {q["qid"]: found(q) for q in queries}
    worse = dict(base, **{"c-0": missed(queries[8])})
    assert fold_gains(queries, base, worse, KS)["c"] == pytest.approx(-0.25)
    assert fold_gains(queries, base, worse, KS)["a"] == 0.0
    assert control_band(queries, base, dict(base), KS)["EH@5"] == 0.0
    assert control_band(queries, base, worse, KS)["EH@5"] == pytest.approx(0.25)

    unanswerable = [*queries, {"qid": "z-0", "project": "z", "evidence": []}]
    assert "z" not in fold_gains(unanswerable, base, worse, KS)  # it raised KeyError 'all'
    assert control_band(unanswerable, base, worse, KS)["EH@5"] == pytest.approx(0.25)


def test_sampling_band_is_zero_when_every_question_scores_alike_and_wide_otherwise():
    queries = corpus(per=20)
    every = {q["qid"]: found(q) for q in queries}
    assert sampling_band(queries, every, KS)["EH@5"] == 0.0
    rng = random.Random(1)
    half = {q["qid"]: (found(q) if rng.random() < 0.5 else missed(q)) for q in queries}
    assert 0.02 < sampling_band(queries, half, KS)["EH@5"] < 0.2


def test_the_eval_report_shows_mean_spread_and_both_noise_bands():
    from memory.entrypoints.eval_command import render_folds
    queries = corpus()
    results = {q["qid"]: (missed(q) if q["qid"].endswith("-0") else found(q)) for q in queries}
    cv = cross_validate(queries, {"run": results}, KS)
    text = render_folds(cv, "project", {"EH@5": 0.0}, sampling_band(queries, results, KS))
    assert "| all | 0.750 ± 0.000 [0.750-0.750]" in text
    assert "control band" in text and "EH@5 0.000" in text
    assert "no control run" in render_folds(cv, "project", None, {"EH@5": 0.1})
