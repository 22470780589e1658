"""What the secret filter hides on the evaluation sets, to compare two versions of it.

    PYTHONPATH=src .venv/bin/python benchmarks/secret_false_positives.py [--eval DIR] [--json OUT]

Counts, per corpus, the lines of every note that redaction changes (the LoCoMo conversations
in ../shared/eval and the frozen vault and engineering fixtures here), and the questions the
secret-question gate answers `no_answer` for. None of these notes holds a credential, so each
redacted line and each flagged question is a false positive unless it holds a secret on
purpose. `--json` writes every redacted line (path, number, text) and flagged question, so
the output of two versions can be diffed item by item.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from memory.domain.query_gate import QueryGate
from memory.domain.secrets import redact_lines

ROOT = Path(__file__).resolve().parent
EVAL = ROOT.parents[1] / "shared" / "eval" / "locomo-dev"
FIXTURES = {"frozen-vault": (ROOT / "fixtures" / "vault", ROOT / "fixtures" / "cases.jsonl"),
            "engineering": (ROOT / "fixtures" / "engineering" / "memory",
                            ROOT / "fixtures" / "engineering" / "queries.jsonl")}


def redacted_lines(root: Path) -> tuple[int, list[tuple[str, int, str]]]:
    """How many lines the notes under `root` hold, and those redaction changes."""
    found, total = [], 0
    for path in sorted(root.rglob("*.md")):
        lines = path.read_text(encoding="utf-8").split("\n")
        total += len(lines)
        clean, _ = redact_lines(lines)
        found += [(path.relative_to(root).as_posix(), number, text)
                  for number, (text, before) in enumerate(zip(clean, lines), 1) if text != before]
    return total, found


def flagged_questions(path: Path) -> tuple[int, list[tuple[str, str]]]:
    """How many questions a set holds, and those the gate answers `no_answer` for."""
    gate = QueryGate()
    cases = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    return len(cases), [(case["qid"], case["question"]) for case in cases
                        if gate.judge(case["question"]).no_answer_reason is not None]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--eval", type=Path, default=EVAL, help="the LoCoMo split (locomo-dev)")
    parser.add_argument("--json", type=Path, help="write every redacted line and flagged question")
    args = parser.parse_args()
    report = {}
    sets = {"locomo-dev": (args.eval / "memory", args.eval / "queries.jsonl"), **FIXTURES}
    for corpus, (notes, questions) in sets.items():
        if not notes.is_dir() or not questions.is_file():
            print(f"{corpus}: absent ({notes})")
            continue
        (total, lines), (asked, flagged) = redacted_lines(notes), flagged_questions(questions)
        report[corpus] = {"redacted_lines": lines, "no_answer": flagged}
        print(f"{corpus}: {len(lines)} of {total} lines redacted, {len(flagged)} of {asked} "
              "questions no_answer")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    main()
