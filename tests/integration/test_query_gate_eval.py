"""The query gate refuses no answerable question: every LoCoMo dev question and every frozen
benchmark case, run on the real stack with and without the gate, gets the same no_answer
flag (and the same items)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from attrs import evolve

REPO = Path(__file__).resolve().parents[2]
LOCOMO = REPO.parent / "shared" / "eval" / "locomo-dev"
FROZEN = REPO / "benchmarks" / "fixtures"
CORPORA = {"locomo-dev": (LOCOMO / "memory", LOCOMO / "queries.jsonl"),
           "frozen": (FROZEN / "vault", FROZEN / "cases.jsonl")}


def flags(service, cases) -> dict[str, tuple]:
    from memory.entrypoints.eval_command import scope_of
    out = {}
    for case in cases:
        packet = service.search(case["question"], limit=10, **scope_of(case))
        out[case["qid"]] = (packet.no_answer, tuple(i.citation for i in packet.items))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("corpus", sorted(CORPORA))
def test_the_gate_changes_no_answer_of_any_evaluation_question(tmp_path, corpus, record_property):
    from memory.entrypoints.container import build
    from memory.entrypoints.settings import Settings
    notes, queries = CORPORA[corpus]
    if not queries.exists():
        pytest.fail(f"{queries} not present: the evaluation set lies in ../shared/eval beside the checkout")
    root = tmp_path / corpus
    shutil.copytree(notes, root)
    app = build(Settings.resolve(str(root), state_dir=str(root / ".ai-memory"), watch=False))
    service = app.use_cases.service()
    assert service.refresh("full").ok
    embedder = app.gateways.embedder()
    embedder.warm()
    assert embedder.wait_ready(300), embedder.state()
    cases = [json.loads(line) for line in queries.read_text(encoding="utf-8").splitlines()
             if line.strip()]
    gated = flags(service, cases)
    ungated = flags(service.with_search_config(evolve(service.engine.config, gate=None)), cases)
    differ = sorted(qid for qid in gated if gated[qid] != ungated[qid])
    no_answers = sum(flag for flag, _ in gated.values())
    record_property("figures", {"questions": len(cases), "differ": len(differ),
                                "no_answer": no_answers})
    print(f"\n[query-gate] {corpus}: {len(cases)} questions, {len(differ)} differ with the "
          f"gate, {no_answers} no-answer either way")
    assert differ == [], [(q, gated[q][0], ungated[q][0]) for q in differ[:10]]
