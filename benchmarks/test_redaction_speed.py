"""Secret redaction on hostile one-line input: linear time, whatever the line repeats.

    .venv/bin/python -m pytest benchmarks/test_redaction_speed.py --benchmark-only
"""

from __future__ import annotations

import pytest

from memory.domain.secrets import redact_lines

UNITS = ["a", "a-", "a.", "a1", "AKIA", "x:", "@", "a://b:", "sk-", "bearer ", "token=",
         "-----BEGIN "]


@pytest.mark.parametrize("chars", [100_000, 200_000])
@pytest.mark.parametrize("unit", UNITS)
def test_redact_one_hostile_line(benchmark, unit, chars):
    line = unit * (chars // len(unit))
    clean, _ = benchmark(redact_lines, [line])
    assert len(clean) == 1
