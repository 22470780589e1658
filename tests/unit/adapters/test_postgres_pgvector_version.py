"""The pgvector the Postgres store accepts: 0.8 or newer, versions compared as numbers."""

from __future__ import annotations

import pytest

from memory.adapters.postgres.schema import pgvector_release, pgvector_supported


@pytest.mark.parametrize(("version", "supported"), [
    ("0.5.1", False), ("0.6.2", False), ("0.7.4", False), ("0.8", True), ("0.8.0", True),
    ("0.8.6", True), ("0.9.1", True), ("0.10.0", True), ("1.0.0", True), ("0.8.0-dev", True),
    ("", False), ("dev", False)])
def test_pgvector_older_than_0_8_is_refused(version, supported):
    assert pgvector_supported(version) is supported


def test_versions_compare_as_numbers_not_text():
    assert pgvector_release("0.10.0") == (0, 10, 0)
    assert pgvector_release("0.10.0") > pgvector_release("0.8.6")  # "0.10" < "0.8" as text
