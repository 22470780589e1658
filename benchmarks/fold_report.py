"""Leave-one-conversation-out tables for the tuning scripts: each variant against a base, fold by fold.

A variant "wins" a fold when its EH@5 there is higher than the base's (equal EH@5: higher
MRR@10); the fold rule keeps a ranking rule only when the defaults win against the rule's
ablation in at least four of five folds (docs/benchmarks.md, session 6).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from memory.application.evaluation import (cross_validate, sampling_band, split_folds,
                                           summarize)

KS = [1, 3, 5, 10]
EPSILON = 1e-9


def fold_rows(queries: Sequence[Mapping], results: Mapping[str, Mapping],
              key: str) -> dict[str, dict]:
    """summarize()['groups']['all'] of each fold, plus its no-answer accuracy."""
    out = {}
    for name, qs in split_folds(queries, key).items():
        s = summarize(qs, results, KS)
        row = dict(s["groups"].get("all", {}))
        row["no-answer"] = s["no_answer"]["accuracy"]
        out[name] = row
    return out


def verdict(base: Mapping[str, dict], other: Mapping[str, dict]) -> list[int]:
    """Per fold: +1 where `other` beats `base` (EH@5, then MRR@10), -1 where it loses."""
    marks = []
    for fold, b in base.items():
        o = other[fold]
        for metric in ("EH@5", "MRR@10"):
            d = o.get(metric, 0.0) - b.get(metric, 0.0)
            if abs(d) > EPSILON:
                marks.append(1 if d > 0 else -1)
                break
        else:
            marks.append(0)
    return marks


def _mean(rows: Mapping[str, dict], metric: str) -> float:
    values = [r[metric] for r in rows.values() if r.get(metric) is not None]
    return sum(values) / len(values) if values else float("nan")


def render(queries: Sequence[Mapping], runs: Mapping[str, Mapping[str, Mapping]],
           key: str) -> str:
    """The fold table of every run against the first, then the cross-validated choice."""
    names = list(runs)
    folds = {name: fold_rows(queries, runs[name], key) for name in names}
    base = folds[names[0]]
    fold_names = list(base)
    out = [f"folds by {key}: {', '.join(fold_names)}; every row against `{names[0]}`",
           "| variant | EH@5 | L@5 | R@5 | MRR@10 | no-answer | EH@5 - base per fold | "
           "wins / losses |", "|---|---|---|---|---|---|---|---|"]
    for name in names:
        rows = folds[name]
        deltas = " ".join(f"{rows[f]['EH@5'] - base[f]['EH@5']:+.3f}" for f in fold_names)
        marks = verdict(base, rows)
        na = _mean(rows, "no-answer")
        out.append(f"| {name} | {_mean(rows, 'EH@5'):.3f} | {_mean(rows, 'L@5'):.1f} "
                   f"| {_mean(rows, 'R@5'):.3f} | {_mean(rows, 'MRR@10'):.3f} "
                   f"| {'n/a' if na != na else f'{na:.3f}'} | {deltas} "
                   f"| {marks.count(1)} / {marks.count(-1)} |")
    cv = cross_validate(queries, runs, KS, key)
    eh = cv.figure("all", "EH@5")
    out.append(f"\nchosen on the other folds: {', '.join(f'{f.fold}: {f.chosen}' for f in cv.folds)}"
               f"; held-out EH@5 {eh.mean:.3f} ± {eh.sd:.3f}" if eh else "")
    band = sampling_band(queries, runs[names[0]], KS, key)
    out.append("sampling band of the base: " + ", ".join(f"{m} {v:.3f}" for m, v in band.items()))
    return "\n".join(out)


def by_category(queries: Sequence[Mapping], runs: Mapping[str, Mapping[str, Mapping]],
                key: str, metric: str = "EH@5") -> str:
    """Fold means of one metric per category, one row per run."""
    groups: list[str] = []
    table = {}
    for name, results in runs.items():
        cv = cross_validate(queries, {name: results}, KS, key)
        groups = groups or cv.groups()
        table[name] = {g: cv.figure(g, metric) for g in groups}
    out = [f"| {metric} fold mean (sd) | " + " | ".join(groups) + " |",
           "|---" * (len(groups) + 1) + "|"]
    for name, row in table.items():
        out.append(f"| {name} | " + " | ".join(
            "n/a" if f is None else f"{f.mean:.3f} ({f.sd:.3f})" for f in row.values()) + " |")
    return "\n".join(out)
