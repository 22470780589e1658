"""Secret redaction speed: real notes (it runs on every chunk at index time and on every item
returned) and hostile one-line input (linear time, whatever the line repeats).

    .venv/bin/python -m pytest benchmarks/test_redaction_speed.py --benchmark-only

The corpus cases also count the lines they redact (`extra_info`, printed with `-s`): on
conversation and project notes these are false positives unless a note holds a credential.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memory.domain.secrets import redact_lines

ROOT = Path(__file__).resolve().parent
CORPORA = {
    "locomo-dev": ROOT.parents[1] / "shared" / "eval" / "locomo-dev" / "memory",
    "frozen-vault": ROOT / "fixtures" / "vault",
}
UNITS = ["a", "a-", "a.", "a1", "AKIA", "x:", "@", "a://b:", "sk-", "bearer ", "token=",
         "-----BEGIN ", "eyJ.", "eyJabcdefgh.", "a=", "://", "QUJD+/", "password: ", "token=token ",
         "password: \"", "<password>", ";pwd={", "Password=a;", "Authorization: ", "a_password: the "]


def _notes(root: Path) -> list[list[str]]:
    return [path.read_text(encoding="utf-8").split("\n") for path in sorted(root.rglob("*.md"))]


@pytest.mark.parametrize("corpus", sorted(CORPORA))
def test_redact_corpus(benchmark, corpus):
    if not CORPORA[corpus].is_dir():
        pytest.fail(f"{CORPORA[corpus]} not present: the evaluation set lies in ../shared/eval "
                    "beside the checkout")
    notes = _notes(CORPORA[corpus])
    results = benchmark(lambda: [redact_lines(lines) for lines in notes])
    redacted = sum(len({f.line for f in findings}) for _, findings in results)
    benchmark.extra_info.update(lines=sum(map(len, notes)), redacted_lines=redacted)
    print(f"\n[redaction] {corpus}: {redacted} of {sum(map(len, notes))} lines redacted")


@pytest.mark.parametrize("chars", [100_000, 200_000])
@pytest.mark.parametrize("unit", UNITS)
def test_redact_one_hostile_line(benchmark, unit, chars):
    line = unit * (chars // len(unit))
    clean, _ = benchmark(redact_lines, [line])
    assert len(clean) == 1
