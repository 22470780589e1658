"""The frozen benchmark: a hand-written team memory and labelled questions, run on the real stack.

Fixtures live in benchmarks/fixtures/ (vault/, cases.jsonl) and are pinned by LOCK; after a
deliberate change run `python benchmarks/fixtures/lock.py --write`. The vault is copied to a
temporary root, refreshed in full (Markdown -> SQLite FTS5 + sqlite-vec + MiniLM + Graphify)
and every case is searched through MemoryService as `ai-memory eval` does.

Bars: recall@5 == 1.0 over answerable cases, no scope leakage, every no-answer case refused.
On Postgres the cases are searched again over one MCP stdio session of `ai-memory serve
--store` with a SELECT-only role, an empty root and an empty state folder (a server on
another host), which must give SQLite's top-1 and hold the same bars.

The clock is pinned to the day the fixtures were frozen: ranking reads "today" for review
dates (`review_after`), and a frozen benchmark must not drift with the calendar.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "benchmarks" / "fixtures"
VAULT = FIXTURES / "vault"
CASES = FIXTURES / "cases.jsonl"
CATEGORIES = ("identifier", "path", "error-string", "paraphrase", "multi-hop", "supersession",
              "scope-isolation", "no-answer")
LIMIT = 10
K = 5
FROZEN_AT = "2026-11-30T12:00:00Z"


def _lock_module():
    spec = importlib.util.spec_from_file_location("benchmark_fixtures_lock", FIXTURES / "lock.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _cases() -> list[dict]:
    with CASES.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


# -- the fixtures themselves (fast) ------------------------------------------------------


def test_lock_matches_fixtures():
    lock = _lock_module()
    expected, actual = lock.read_lock(FIXTURES), lock.compute_lock(FIXTURES)
    assert actual == expected, (
        "benchmarks/fixtures drifted from LOCK. If the change is deliberate, review it and "
        "run `python benchmarks/fixtures/lock.py --write`.")


def test_cases_are_well_formed():
    cases = _cases()
    assert len({c["qid"] for c in cases}) == len(cases), "duplicate qids"
    counts = Counter(c["category"] for c in cases)
    assert set(counts) == set(CATEGORIES), counts
    assert all(n >= 5 for n in counts.values()), counts
    for case in cases:
        assert case["question"].strip(), case["qid"]
        assert (case["category"] == "no-answer") == (not case["evidence"]), case["qid"]
        assert set(case.get("scope") or {}) <= {"root_scope", "repository", "project", "ticket",
                                               "status", "path_prefix"}, case["qid"]
        for ev in case["evidence"]:
            lines = (VAULT / ev["path"]).read_text(encoding="utf-8").splitlines()
            assert 1 <= ev["line"] <= len(lines), (case["qid"], ev)
            assert lines[ev["line"] - 1].strip(), (case["qid"], ev, "evidence line is blank")


# -- the real stack (slow: one full refresh for the module) ------------------------------


STORES = ("sqlite", "postgres")
_RUNS: dict[str, dict] = {}


def _frozen(store: str, tmp_path_factory, request) -> dict:
    """One full refresh of the vault and every case searched, once per store per session.

    postgres: the refresh writes to a fresh database and the cases are searched by another
    container whose state folder is empty, as a server on another host would."""
    if store in _RUNS:
        return _RUNS[store]
    from dependency_injector import providers

    from memory.adapters.inmemory.state import FixedClock
    from memory.application.evaluation import score_query, summarize
    from memory.entrypoints.container import build
    from memory.entrypoints.eval_command import run_queries
    from memory.entrypoints.settings import Settings

    root = tmp_path_factory.mktemp(f"frozen-benchmark-{store}") / "vault"
    shutil.copytree(VAULT, root)
    url = request.getfixturevalue("test_postgres").fresh() if store == "postgres" else None

    def app_with(state_dir: Path):
        app = build(Settings.resolve(str(root), state_dir=str(state_dir), watch=False, store=url))
        app.gateways.clock.override(providers.Object(FixedClock(FROZEN_AT)))
        return app

    app = app_with(root / ".ai-memory")
    app.use_cases.service().refresh("full")
    if url is not None:
        empty = tmp_path_factory.mktemp("empty-state")
        app = app_with(empty)
    service = app.use_cases.service()
    embedder = app.gateways.embedder()
    embedder.warm()
    assert embedder.wait_ready(300), f"embedding model not ready: {embedder.state()}"
    cases = _cases()
    results = run_queries(service, app.gateways.catalogue(), cases, limit=LIMIT)
    summary = summarize(cases, results, [1, 3, K, 10])
    per_case = {c["qid"]: score_query(c["evidence"], results[c["qid"]]["hits"], [K])
                for c in cases if c["evidence"]}
    _RUNS[store] = {"cases": cases, "results": results, "summary": summary,
                    "per_case": per_case, "url": url}
    return _RUNS[store]


@pytest.fixture(scope="module", params=STORES)
def frozen_run(request, tmp_path_factory):
    return _frozen(request.param, tmp_path_factory, request)


@pytest.mark.slow
def test_postgres_store_gives_the_same_top_1_as_sqlite(tmp_path_factory, request):
    sqlite, postgres = (_frozen(store, tmp_path_factory, request) for store in STORES)
    differ = [f"- {c['qid']} {c['question']!r}: sqlite {_top_files(sqlite['results'][c['qid']], 1)}"
              f" postgres {_top_files(postgres['results'][c['qid']], 1)}"
              for c in sqlite["cases"]
              if _top_files(sqlite["results"][c["qid"]], 1)
              != _top_files(postgres["results"][c["qid"]], 1)]
    assert not differ, "top-1 differs between the stores:\n" + "\n".join(differ)


def _top_files(result: dict, k: int = K) -> list[str]:
    return list(dict.fromkeys(h["path"] for h in result["hits"]))[:k]


def _report(title: str, rows: list[str], summary: dict) -> str:
    groups = summary["groups"]
    table = "\n".join(
        f"  {name:16} n={row['n']:2}  R@5={row['R@5']:.3f}  MRR@10={row['MRR@10']:.3f}"
        for name, row in groups.items())
    na = summary["no_answer"]
    return (f"{title}: {len(rows)} case(s)\n" + "\n".join(rows) + "\n\nby category:\n" + table
            + f"\n  no-answer accuracy {na['accuracy']} over {na['n']}; scope leakage "
              f"{summary['scope_leakage']:.4f} ({summary['leaked_hits']} hits)")


@pytest.mark.slow
def test_recall_at_5_is_perfect_on_answerable_cases(frozen_run):
    rows = []
    for case in frozen_run["cases"]:
        if not case["evidence"]:
            continue
        if frozen_run["per_case"][case["qid"]][f"R@{K}"] < 1.0:
            result = frozen_run["results"][case["qid"]]
            top = _top_files(result)
            missing = sorted({e["path"] for e in case["evidence"]} - set(top))
            rows.append(f"- {case['qid']} [{case['category']}] {case['question']!r} "
                        f"scope={case.get('scope') or {}}"
                        f"{' NO_ANSWER' if result['no_answer'] else ''}\n"
                        f"    missing: {missing}\n    top-{K}: {top}")
    recall = frozen_run["summary"]["groups"]["all"][f"R@{K}"]
    assert recall == 1.0 and not rows, _report(f"R@{K} = {recall:.3f}, misses", rows,
                                                frozen_run["summary"])


@pytest.mark.slow
def test_no_hit_leaks_out_of_its_scope(frozen_run):
    rows = [f"- {c['qid']} scope={c.get('scope') or {}} leaked "
            f"{frozen_run['results'][c['qid']]['leaked']}: "
            f"{_top_files(frozen_run['results'][c['qid']], LIMIT)}"
            for c in frozen_run["cases"] if frozen_run["results"][c["qid"]]["leaked"]]
    assert frozen_run["summary"]["scope_leakage"] == 0 and not rows, _report(
        "hits outside the requested scope", rows, frozen_run["summary"])


@pytest.mark.slow
def test_every_no_answer_case_is_refused(frozen_run):
    rows = [f"- {c['qid']} {c['question']!r} scope={c.get('scope') or {}}\n"
            f"    top-{K}: {_top_files(frozen_run['results'][c['qid']])}"
            for c in frozen_run["cases"]
            if not c["evidence"] and not frozen_run["results"][c["qid"]]["no_answer"]]
    accuracy = frozen_run["summary"]["no_answer"]["accuracy"]
    assert accuracy == 1.0 and not rows, _report(
        f"no-answer accuracy {accuracy}, answered anyway", rows, frozen_run["summary"])


def test_engineering_queries_point_at_their_answer_lines():
    """benchmarks/fixtures/engineering: queries.jsonl is what cases.py derives from the notes."""
    spec = importlib.util.spec_from_file_location(
        "engineering_cases", FIXTURES / "engineering" / "cases.py")
    cases = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cases)
    expected = (FIXTURES / "engineering" / "queries.jsonl").read_text(encoding="utf-8")
    assert expected == "".join(json.dumps(q) + "\n" for q in cases.queries()), (
        "run `python benchmarks/fixtures/engineering/cases.py --write`")
    assert len({p for p in (FIXTURES / "engineering" / "memory").rglob("*.md")}) >= 30
    assert sum(bool(q["evidence"]) for q in cases.queries()) >= 60


# -- the same index served over MCP by a server with no state folder and no checkout --------


@pytest.fixture(scope="module")
def anyio_backend():
    return "asyncio"


async def _mcp_session(url: str, base: Path, calls: list[tuple[str, dict]]) -> list:
    """One `ai-memory serve --store` session: a role that may only SELECT, an empty root
    (no checkout of the notes) and an empty state folder; the results of `calls` in order."""
    import os
    import sys

    import anyio
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    root, state = base / "no-checkout", base / "empty-state"
    root.mkdir()
    state.mkdir()
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("AI_MEMORY_")},
           "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    params = StdioServerParameters(
        command=sys.executable, env=env,
        args=["-m", "memory", "serve", "--no-watch", "--read-only", "--store", url,
              "--root", str(root), "--state-dir", str(state)])
    results = []
    with (base / "serve.stderr").open("w") as err:
        async with stdio_client(params, errlog=err) as (read, write):
            async with ClientSession(read, write) as session:
                with anyio.fail_after(600):
                    await session.initialize()
                    for tool, arguments in calls:
                        results.append(await session.call_tool(tool, arguments))
    assert "Traceback" not in (base / "serve.stderr").read_text()
    assert not list(state.iterdir()), "the server wrote to its state folder"
    return results


def _leaks(url: str, cases: list[dict], hits: dict) -> list[str]:
    from memory.adapters.postgres import PostgresDatabase, PostgresNoteCatalogue
    from memory.domain.scope import ScopeFilter, StatusFilter
    from memory.entrypoints.eval_command import scope_of

    catalogue = PostgresNoteCatalogue(PostgresDatabase(url))
    leaked = []
    for case in cases:
        scope = scope_of(case)
        admits = ScopeFilter(**{k: v for k, v in scope.items() if k != "status"},
                             status=StatusFilter.parse(scope.get("status"))).admits
        leaked += [f"{case['qid']}: {item['path']}" for item in hits[case["qid"]]["hits"]
                   if not admits(catalogue.note(item["memory_id"]))]
    return leaked


@pytest.mark.slow
@pytest.mark.anyio
async def test_an_mcp_session_on_postgres_with_no_state_folder_answers_as_sqlite(
        tmp_path_factory, request):
    from postgres_store import select_only

    from memory.application.evaluation import score_query
    from memory.entrypoints.eval_command import scope_of

    sqlite, postgres = (_frozen(store, tmp_path_factory, request) for store in STORES)
    cases = sqlite["cases"]
    reader = select_only(postgres["url"], "aim_frozen_reader")
    hop = next(c for c in cases if c["category"] == "multi-hop" and len(c["evidence"]) >= 2)
    first, second = (e["path"] for e in hop["evidence"][:2])
    calls = [("memory_search", {"query": c["question"], "limit": LIMIT, **scope_of(c)})
             for c in cases]
    calls += [("memory_get", {"identity": first}), ("memory_neighbors", {"identity": first}),
              ("memory_path", {"source": first, "target": second}), ("memory_health", {}),
              ("memory_explain", {"query": hop["question"], "identity": second}),
              ("memory_refresh", {"mode": "index"})]
    *answers, refreshed = await _mcp_session(reader, tmp_path_factory.mktemp("mcp-postgres"),
                                             calls)
    # A reader's root is not the notes: a refresh from it would index nothing.
    assert refreshed.is_error and "reads a shared index" in refreshed.content[0].text, \
        refreshed.content[0].text
    assert not any(a.is_error for a in answers), [a.content[0].text for a in answers
                                                  if a.is_error]
    packets = [a.structured_content for a in answers[:len(cases)]]
    hits = {c["qid"]: {"hits": p["items"], "no_answer": p["no_answer"]}
            for c, p in zip(cases, packets)}
    differ = [c["qid"] for c in cases
              if _top_files(hits[c["qid"]], 1) != _top_files(sqlite["results"][c["qid"]], 1)]
    assert not differ, f"top-1 differs from SQLite for {differ}"
    missed = [c["qid"] for c in cases if c["evidence"]
              and score_query(c["evidence"], hits[c["qid"]]["hits"], [K])[f"R@{K}"] < 1.0]
    assert not missed, f"R@{K} < 1 over MCP for {missed}"
    assert all(hits[c["qid"]]["no_answer"] for c in cases if not c["evidence"]), \
        "a no-answer case was answered"
    assert not _leaks(postgres["url"], cases, hits), "a hit left its scope"
    read, neighbours, path, health, explained = (a.structured_content
                                                 for a in answers[len(cases):])
    assert read["path"] == first and read["lines"] and read["line_count"] == len(
        (VAULT / first).read_text(encoding="utf-8").splitlines())
    assert any("index holds" in w for w in read["warnings"])
    assert neighbours["neighbors"] and neighbours["graph_generation"]
    assert path["connected"] and path["graph_generation"] == neighbours["graph_generation"]
    assert health["healthy"] and not health["graph"]["problems"], health
    assert health["graph"]["generation"]["id"] == neighbours["graph_generation"]
    assert explained["identity"]["found"] and explained["identity"]["path"] == second
    assert explained["generation"]["graph"] == neighbours["graph_generation"]
