"""Retrieval metrics over labelled queries, with the definitions of shared/eval/score.py."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}


def percentile(values: Sequence[float], p: float) -> float:
    """Nearest-rank percentile, as score.py computes it."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def score_query(evidence: Sequence[Mapping], hits: Sequence[Mapping], ks: Sequence[int]) -> dict:
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


def summarize(queries: Sequence[Mapping], results: Mapping[str, Mapping],
              ks: Sequence[int]) -> dict:
    """Per-group means (all + categories), latency percentiles, no-answer and leakage rates.

    Queries without evidence are no-answer cases: they count only toward no-answer accuracy.
    """
    groups: dict[str, list[dict]] = defaultdict(list)
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
