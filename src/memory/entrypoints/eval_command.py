"""`ai-memory eval QUERIES`: run labelled queries through MemoryService and score them."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from attrs import evolve

from memory.application.evaluation import (FOLD_METRICS, CrossValidation, control_band,
                                           cross_validate, sampling_band, split_folds,
                                           summarize)
from memory.domain.errors import InvalidRequest, Unavailable
from memory.domain.messages import Action, Message
from memory.domain.scope import ScopeFilter, StatusFilter

SCOPE_KEYS = ("root_scope", "repository", "project", "ticket", "status", "path_prefix")


def load_queries(path: str, what: str = "queries") -> list[dict]:
    try:
        with open(path, encoding="utf-8") as f:
            return [json.loads(line) for line in f if line.strip()]
    except (OSError, json.JSONDecodeError) as exc:
        raise InvalidRequest(f"cannot read {what} from {path}: {exc}") from exc


def scope_of(query: dict) -> dict:
    scope = dict(query.get("scope") or {})
    if query.get("project") and "project" not in scope:
        scope["project"] = query["project"]
    return {k: v for k, v in scope.items() if k in SCOPE_KEYS and v is not None}


def run_queries(service, chunks, queries: list[dict], limit: int = 10) -> dict[str, dict]:
    results = {}
    for q in queries:
        scope = scope_of(q)
        started = time.perf_counter()
        packet = service.search(q["question"], limit=limit, **scope)
        latency = (time.perf_counter() - started) * 1000
        flt = ScopeFilter(**{k: v for k, v in scope.items() if k != "status"},
                          status=StatusFilter.parse(scope.get("status")))
        leaked = 0
        for item in packet.items:
            note = chunks.note(item.memory_id)
            leaked += note is None or not flt.admits(note)
        results[q["qid"]] = {
            "qid": q["qid"], "latency_ms": round(latency, 3), "no_answer": packet.no_answer,
            "leaked": leaked,
            "hits": [{"path": i.path, "start_line": i.start_line, "end_line": i.end_line}
                     for i in packet.items]}
    return results


def render(summary: dict, ks: list[int]) -> str:
    cols = ["n"] + [f"{m}@{k}" for m in ("R", "H", "EH") for k in ks] + ["MRR@10", "nDCG@10",
                                                                         f"L@{ks[-1]}"]
    if 5 in ks and ks[-1] != 5:
        cols.append("L@5")
    out = ["| group | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
    for name, row in summary["groups"].items():
        cells = [str(row[c]) if c == "n" else f"{row[c]:.1f}" if c.startswith("L@")
                 else f"{row[c]:.3f}" for c in cols]
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    na = summary["no_answer"]
    out.append("")
    out.append(f"no-answer accuracy: {na['accuracy']:.3f} over {na['n']} queries"
               if na["n"] else "no-answer accuracy: n/a (no unanswerable queries)")
    out.append(f"scope leakage: {summary['scope_leakage']:.4f} ({summary['leaked_hits']} hits)")
    out.append(f"latency p50 {summary['p50_ms']:.1f} ms, p95 {summary['p95_ms']:.1f} ms")
    return "\n".join(out)


def load_results(path: str) -> dict[str, dict]:
    """A results file (as --results writes it: one {"qid", "hits", ...} a line), by qid."""
    return {r["qid"]: r for r in load_queries(path, "results")}


def render_folds(cv: CrossValidation, key: str, control: dict[str, float] | None,
                 sampling: dict[str, float]) -> str:
    """Each figure as the mean over folds, its spread (sd, lowest and highest fold), and
    beside it the noise bands a difference must clear to mean anything."""
    chosen = sorted({f.chosen for f in cv.folds})
    out = [f"leave-one-out over {len(cv.folds)} folds by {key} "
           f"(settings chosen on the other folds: {', '.join(chosen)})",
           "| group | " + " | ".join(f"{m} mean ± sd [min-max]" for m in FOLD_METRICS) + " |",
           "|---" * (len(FOLD_METRICS) + 1) + "|"]
    for group in cv.groups():
        cells = []
        for m in FOLD_METRICS:
            f = cv.figure(group, m)
            digits = 1 if m.startswith("L@") else 3
            cells.append("n/a" if f is None else
                         f"{f.mean:.{digits}f} ± {f.sd:.{digits}f} "
                         f"[{f.low:.{digits}f}-{f.high:.{digits}f}]")
        out.append(f"| {group} | " + " | ".join(cells) + " |")
    out.append("per fold (all): " + ", ".join(
        f"{f.fold} EH@5 {f.summary['groups']['all']['EH@5']:.3f}" for f in cv.folds
        if "all" in f.summary["groups"]))
    band = ", ".join(f"{m} {v:.3f}" for m, v in sampling.items())
    out.append(f"sampling band (half of the central 90 % of fold means, questions redrawn): {band}")
    out.append("control band (largest per-fold difference from the --control run): " +
               (", ".join(f"{m} {v:.3f}" for m, v in control.items()) if control is not None
                else "no control run given (--control RESULTS: the same settings run again, "
                     "e.g. from a cold state)"))
    return "\n".join(out)


def run_eval(args, settings) -> int:
    from memory.entrypoints.container import build
    ks = sorted({int(k) for k in args.k.split(",")} | {5})
    app = build(settings)
    signals = {s.strip() for s in args.signals.split(",") if s.strip()}
    unknown = signals - {"lexical", "semantic", "graph"}
    if unknown:
        raise InvalidRequest(f"unknown signals {sorted(unknown)}")
    config = app.use_cases.search_config()
    app.use_cases.search_config.override(evolve(config, gather=evolve(
        config.gather, use_lexical="lexical" in signals, use_semantic="semantic" in signals,
        use_graph="graph" in signals)))
    service = app.use_cases.service()
    _require_index(app.gateways.index(), settings.root)
    if "semantic" in signals:
        app.gateways.embedder().warm()
        app.gateways.embedder().wait_ready(300)
    queries = load_queries(args.queries)
    results = run_queries(service, app.gateways.catalogue(), queries, limit=max(ks))
    if args.results:
        Path(args.results).write_text(
            "".join(json.dumps(r) + "\n" for r in results.values()), encoding="utf-8")
    summary = summarize(queries, results, ks)
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(render(summary, ks))
        print(_fold_report(args, queries, results, ks))
    print(f"{len(queries)} queries, signals: {','.join(sorted(signals))}", file=sys.stderr)
    return 0


def _require_index(index, root: Path) -> None:
    """A root never indexed has nothing to score: every query would count as a miss."""
    if index.current() is None:
        raise Unavailable(Message(
            f"not indexed: {root} has no index yet, so there is nothing to score; run ",
            Action.REFRESH, f" --root {root} first (with the same --state-dir, if any)"))


def _fold_report(args, queries: list[dict], results: dict[str, dict], ks: list[int]) -> str:
    key = getattr(args, "folds", "project") or "project"
    if key == "none" or len(split_folds(queries, key)) < 2:
        return ""
    control = control_band(queries, results, load_results(args.control), ks, key) \
        if getattr(args, "control", None) else None
    cv = cross_validate(queries, {"the settings run": results}, ks, key)
    return "\n" + render_folds(cv, key, control, sampling_band(queries, results, ks, key))
