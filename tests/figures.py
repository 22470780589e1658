"""Counters that property tests keep of what they tried, printed when their module ends.

`scripts/stress.py` collects the printed `[name] {...}` lines into docs/reliability.md.
"""

from __future__ import annotations

import sys
from collections import Counter

import pytest


def printed_at_teardown(name: str, seen: Counter):
    """An autouse module fixture printing `[name] {counter}` to stderr after the last test."""
    @pytest.fixture(scope="module", autouse=True)
    def figures():
        yield
        print(f"\n[{name}] {dict(seen)}", file=sys.stderr)
    return figures
