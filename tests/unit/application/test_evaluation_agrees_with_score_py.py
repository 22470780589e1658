"""`ai-memory eval` metrics must equal ../shared/eval/score.py on the same results."""

import importlib.util
import random
from pathlib import Path

import pytest

from memory.application.evaluation import cross_validate, percentile, score_query, summarize

SCORE_PY = Path(__file__).resolve().parents[4] / "shared" / "eval" / "score.py"


@pytest.fixture(scope="module")
def reference():
    if not SCORE_PY.exists():
        pytest.fail(f"{SCORE_PY} not present: the scorer lies in ../shared/eval beside the checkout")
    spec = importlib.util.spec_from_file_location("shared_score", SCORE_PY)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def synthetic(seed: int, n: int = 60):
    rng = random.Random(seed)
    files = [f"projects/p/sessions/s-{i}.md" for i in range(8)]
    queries, results = [], []
    for i in range(n):
        evidence = [{"path": rng.choice(files), "line": rng.randint(1, 40)}
                    for _ in range(rng.randint(1, 3))]
        queries.append({"qid": f"q{i}", "category": rng.randint(1, 4), "evidence": evidence})
        hits = []
        for _ in range(rng.randint(0, 10)):
            start = rng.randint(1, 40)
            hits.append({"path": rng.choice(files), "start_line": start,
                         "end_line": start + rng.randint(0, 11)})
        if rng.random() > 0.05:  # a few queries have no result at all
            results.append({"qid": f"q{i}", "latency_ms": rng.uniform(1, 50), "hits": hits})
    return queries, results


@pytest.mark.parametrize("seed", range(5))
def test_per_query_and_summary_metrics_match(reference, seed):
    queries, results = synthetic(seed)
    ks = [1, 3, 5, 10]
    by_qid = {r["qid"]: r for r in results}
    for q in queries:
        hits = by_qid.get(q["qid"], {}).get("hits", [])
        assert score_query(q["evidence"], hits, ks) == reference.score_query(q, hits, ks)
    ours = summarize(queries, by_qid, ks)["groups"]
    table, _ = reference.score(queries, results, ks)
    for group, row in table.items():
        for key, value in row.items():
            if key.endswith("_ms"):
                continue
            assert ours[group][key] == pytest.approx(value), (group, key)
    latencies = [r["latency_ms"] for r in results]
    assert percentile(latencies, 95) == reference.percentile(latencies, 95)


@pytest.mark.parametrize("seed", range(3))
def test_each_held_out_fold_agrees_with_score_py_on_its_questions(reference, seed):
    rng = random.Random(seed)
    queries, results = [], {}
    for i in range(80):
        project = rng.choice("abcde")
        q = {"qid": f"q{i}", "project": project, "category": rng.randint(1, 4),
             "evidence": [{"path": f"{project}.md", "line": rng.randint(1, 40)}]}
        queries.append(q)
        results[q["qid"]] = {"qid": q["qid"], "hits": [
            {"path": f"{project if rng.random() < 0.7 else 'z'}.md", "start_line": s,
             "end_line": s + rng.randint(0, 11)}
            for s in (rng.randint(1, 40) for _ in range(rng.randint(0, 10)))]}
    cv = cross_validate(queries, {"only": results}, [1, 3, 5, 10])
    for fold in cv.folds:
        mine = [q for q in queries if q["project"] == fold.fold]
        table, _ = reference.score(mine, [results[q["qid"]] for q in mine], [1, 3, 5, 10])
        for group, row in table.items():
            for key, value in row.items():
                if not key.endswith("_ms"):
                    assert fold.summary["groups"][group][key] == pytest.approx(value)
    assert cv.figure("all", "EH@5").mean == pytest.approx(
        sum(summarize([q for q in queries if q["project"] == f.fold], results, [1, 3, 5, 10])
            ["groups"]["all"]["EH@5"] for f in cv.folds) / len(cv.folds))
