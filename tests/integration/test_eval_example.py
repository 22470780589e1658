"""`ai-memory eval` on the example the docs describe: it prints the metrics they define."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

from tests.integration.http_harness import server_env

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "benchmarks" / "fixtures" / "eval-example"
DOC = REPO / "docs" / "benchmarks.md"


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memory", *args], capture_output=True,
                          text=True, timeout=600, env=server_env())


def test_the_example_scores_with_every_documented_metric(tmp_path):
    shutil.copytree(EXAMPLE, tmp_path / "example")
    root, state = tmp_path / "example" / "memory", tmp_path / "state"
    built = cli("refresh", "--mode", "full", "--root", str(root), "--state-dir", str(state))
    assert built.returncode == 0, built.stderr

    run = cli("eval", str(tmp_path / "example" / "queries.jsonl"), "--root", str(root),
              "--state-dir", str(state), "--k", "1,5", "--results", str(tmp_path / "res.jsonl"))

    assert run.returncode == 0, run.stderr
    header = next(line for line in run.stdout.splitlines() if line.startswith("| group |"))
    columns = [c.strip() for c in header.strip("|").split("|")]
    assert columns == ["group", "n", "R@1", "R@5", "H@1", "H@5", "EH@1", "EH@5", "MRR@10",
                       "nDCG@10", "L@5"]  # L@5 once (it was listed twice when 5 was the last k)
    row = next(line for line in run.stdout.splitlines() if line.startswith("| all |"))
    cells = dict(zip(columns, (c.strip() for c in row.strip("|").split("|")), strict=True))
    assert cells["n"] == "2" and cells["EH@5"] == "1.000" and cells["MRR@10"] == "1.000"
    assert float(cells["L@5"]) > 0
    assert "no-answer accuracy: 1.000 over 1 queries" in run.stdout
    assert "leave-one-out over 3 folds by project" in run.stdout
    results = [json.loads(line) for line in (tmp_path / "res.jsonl").read_text().splitlines()]
    assert [r["qid"] for r in results] == ["ex-01", "ex-02", "ex-03"]

    control = cli("eval", str(tmp_path / "example" / "queries.jsonl"), "--root", str(root),
                  "--state-dir", str(state), "--control", str(tmp_path / "res.jsonl"))
    assert control.returncode == 0, control.stderr
    assert re.search(r"control band \(.*\): EH@5 0\.000", control.stdout)


def test_the_docs_define_each_field_and_metric_and_the_help_points_inside_the_repository():
    section = DOC.read_text(encoding="utf-8").split("## Scoring labelled queries", 1)[1]
    section = section.split("\n## ", 1)[0]
    fields = {key for line in (EXAMPLE / "queries.jsonl").read_text().splitlines()
              for key in json.loads(line)}
    for name in fields | {"project", "category", "scope"}:
        assert f"| `{name}` |" in section, name
    for metric in ("R@k", "H@k", "EH@k", "MRR@10", "nDCG@10", "L@k", "--control", "--folds"):
        assert f"`{metric}" in section, metric
    assert "benchmarks/fixtures/eval-example" in section

    shown = cli("eval", "--help")
    assert shown.returncode == 0
    assert "docs/benchmarks.md" in shown.stdout and "eval-example" in shown.stdout
    assert "../" not in shown.stdout and "shared/eval" not in shown.stdout
