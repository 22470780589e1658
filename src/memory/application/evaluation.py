"""Retrieval metrics over labelled queries (each defined in docs/benchmarks.md, "Scoring labelled
queries"; the same definitions as the LoCoMo reference scorer, score.py)."""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from attrs import frozen

Record = Mapping[str, Any]  # one JSON object: a query, a run's result for it, a hit
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}


def percentile(values: Sequence[float], p: float) -> float:
    """Nearest-rank percentile, as score.py computes it."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def score_query(evidence: Sequence[Record], hits: Sequence[Record],
                ks: Sequence[int]) -> dict[str, Any]:
    """File-level R/H/MRR/nDCG over hits deduplicated by path; line-level EH/L over raw hits."""
    gold_files = {e["path"] for e in evidence}
    gold_lines = {(e["path"], e["line"]) for e in evidence}
    files = list(dict.fromkeys(h["path"] for h in hits))
    m: dict[str, float] = {}
    for k in ks:
        top = set(files[:k])
        m[f"R@{k}"] = len(gold_files & top) / len(gold_files) if gold_files else 0.0
        m[f"H@{k}"] = float(bool(gold_files & top))
        covered = {(p, ln) for (p, ln) in gold_lines for h in hits[:k]
                   if h["path"] == p and int(h["start_line"]) <= ln <= int(h["end_line"])}
        m[f"EH@{k}"] = len(covered) / len(gold_lines) if gold_lines else 0.0
        m[f"L@{k}"] = sum(int(h["end_line"]) - int(h["start_line"]) + 1 for h in hits[:k])
    ranks = [i for i, p in enumerate(files[:10], 1) if p in gold_files]
    m["MRR@10"] = 1 / ranks[0] if ranks else 0.0
    idcg = sum(1 / math.log2(i + 1) for i in range(1, min(len(gold_files), 10) + 1))
    m["nDCG@10"] = sum(1 / math.log2(r + 1) for r in ranks) / idcg if idcg else 0.0
    return m


def summarize(queries: Sequence[Record], results: Mapping[str, Record],
              ks: Sequence[int]) -> dict[str, Any]:
    """Per-group means (all + categories), latency percentiles, no-answer and leakage rates.

    Queries without evidence are no-answer cases: they count only toward no-answer accuracy.
    """
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    latencies: dict[str, list[float]] = defaultdict(list)
    no_answer_right = no_answer_total = leaked = returned = 0
    for q in queries:
        r = results.get(q["qid"], {})
        if r.get("latency_ms") is not None:
            latencies["all"].append(float(r["latency_ms"]))
        leaked += r.get("leaked", 0)
        returned += len(r.get("hits", []))
        if not q.get("evidence"):
            no_answer_total += 1
            no_answer_right += bool(r.get("no_answer"))
            continue
        m = score_query(q["evidence"], r.get("hits", []), ks)
        category = q.get("category")
        for g in ("all", CATEGORIES.get(category, str(category)) if category is not None else None):
            if g:
                groups[g].append(m)
    table = {}
    for g, ms in groups.items():
        row = {"n": len(ms)}
        row.update({key: sum(m[key] for m in ms) / len(ms) for key in ms[0]})
        table[g] = row
    answerable = table.get("all", {"n": 0})
    return {
        "groups": table,
        "answerable": answerable.get("n", 0),
        "no_answer": {"n": no_answer_total,
                      "accuracy": no_answer_right / no_answer_total if no_answer_total else None},
        "scope_leakage": leaked / returned if returned else 0.0,
        "leaked_hits": leaked,
        "p50_ms": percentile(latencies["all"], 50),
        "p95_ms": percentile(latencies["all"], 95),
    }


# -- leave-one-group-out cross-validation ----------------------------------------------------

FOLD_METRICS = ("EH@5", "L@5", "R@5", "MRR@10")


def split_folds(queries: Sequence[Record], key: str = "project",
                count: int = 5) -> dict[str, list[Record]]:
    """Queries by fold, in order of first appearance.

    A fold is one value of `key` (a LoCoMo conversation: its project); queries without it
    are dealt round-robin into `count` folds in file order, so a small case set still splits.
    """
    out: dict[str, list[Record]] = {}
    for i, q in enumerate(queries):
        out.setdefault(str(q.get(key) or f"fold-{i % count + 1}"), []).append(q)
    return out


@frozen(kw_only=True)
class Figure:
    """One metric over folds: the mean of the folds' figures and how far they spread."""

    mean: float
    sd: float
    low: float
    high: float
    values: tuple[float, ...]

    @classmethod
    def of(cls, values: Sequence[float]) -> Figure:
        mean = sum(values) / len(values)
        sd = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
        return cls(mean=mean, sd=sd, low=min(values), high=max(values), values=tuple(values))


@frozen(kw_only=True)
class HeldOut:
    """One fold scored with the settings chosen on the other folds."""

    fold: str
    chosen: str  # the variant the other folds preferred
    summary: dict[str, Any]  # summarize() of the fold's queries


@frozen(kw_only=True)
class CrossValidation:
    """Every fold held out once; figures are means over folds, not over questions."""

    folds: tuple[HeldOut, ...]

    def figure(self, group: str, metric: str) -> Figure | None:
        values = [f.summary["groups"][group][metric] for f in self.folds
                  if group in f.summary["groups"]]
        return Figure.of(values) if values else None

    def groups(self) -> list[str]:
        found = {g for f in self.folds for g in f.summary["groups"]}
        return ["all", *(g for g in CATEGORIES.values() if g in found),
                *sorted(found - {"all", *CATEGORIES.values()})]


def cross_validate(queries: Sequence[Record], runs: Mapping[str, Mapping[str, Record]],
                   ks: Sequence[int], key: str = "project", objective: str = "EH@5",
                   tie_breaker: str = "MRR@10") -> CrossValidation:
    """Leave one fold out: choose among `runs` (variant -> results) on the other folds by
    `objective`, then score the fold with the chosen variant's results.

    On a tie the variant listed first wins: list the simpler settings first.
    """
    folds = split_folds(queries, key)
    held = []
    for name, test in folds.items():
        train = [q for other, qs in folds.items() if other != name for q in qs]
        chosen = max(runs, key=lambda v: _objective(train, runs[v], ks, objective, tie_breaker))
        held.append(HeldOut(fold=name, chosen=chosen, summary=summarize(test, runs[chosen], ks)))
    return CrossValidation(folds=tuple(held))


def _objective(queries: Sequence[Record], results: Mapping[str, Record], ks: Sequence[int],
               objective: str, tie_breaker: str) -> tuple[float, float]:
    row = summarize(queries, results, ks)["groups"].get("all", {})
    return round(row.get(objective, 0.0), 9), round(row.get(tie_breaker, 0.0), 9)


def fold_gains(queries: Sequence[Record], base: Mapping[str, Record],
               other: Mapping[str, Record], ks: Sequence[int], key: str = "project",
               metric: str = "EH@5") -> dict[str, float]:
    """Per fold, how much `other`'s results beat `base`'s on `metric` (negative: lose).

    A fold of unanswerable questions only has no such figure and is left out.
    """
    return {name: summarize(qs, other, ks)["groups"]["all"][metric]
            - summarize(qs, base, ks)["groups"]["all"][metric]
            for name, qs in split_folds(queries, key).items()
            if any(q.get("evidence") for q in qs)}


def control_band(queries: Sequence[Record], first: Mapping[str, Record],
                 second: Mapping[str, Record], ks: Sequence[int], key: str = "project",
                 metrics: Sequence[str] = FOLD_METRICS) -> dict[str, float]:
    """The noise of the control: per metric, the largest per-fold difference between two
    runs of the same settings (e.g. each from a cold state)."""
    return {m: max(abs(d) for d in fold_gains(queries, first, second, ks, key, m).values())
            for m in metrics}


def sampling_band(queries: Sequence[Record], results: Mapping[str, Record],
                  ks: Sequence[int], key: str = "project", metrics: Sequence[str] = FOLD_METRICS,
                  rounds: int = 200, seed: int = 0) -> dict[str, float]:
    """Half the width of the central 90 % of fold means when each fold's questions are
    drawn again with replacement: what another set of questions like these could move."""
    rng = random.Random(seed)
    per_fold = [[score_query(q["evidence"], results.get(q["qid"], {}).get("hits", []), ks)
                 for q in qs if q.get("evidence")]
                for qs in split_folds(queries, key).values()]
    per_fold = [rows for rows in per_fold if rows]
    band = {}
    for m in metrics:
        means = sorted(sum(sum(rows[rng.randrange(len(rows))][m] for _ in rows) / len(rows)
                           for rows in per_fold) / len(per_fold) for _ in range(rounds))
        band[m] = (means[int(0.95 * (rounds - 1))] - means[int(0.05 * (rounds - 1))]) / 2
    return band
