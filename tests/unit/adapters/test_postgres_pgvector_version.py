"""The pgvector the Postgres store accepts: 0.8 or newer, versions compared as numbers."""

from __future__ import annotations

import pytest

from memory.adapters.postgres.schema import (pgvector_problem, pgvector_release,
                                             pgvector_supported)


@pytest.mark.parametrize(("version", "supported"), [
    ("0.5.1", False), ("0.6.2", False), ("0.7.4", False), ("0.8", True), ("0.8.0", True),
    ("0.8.6", True), ("0.9.1", True), ("0.10.0", True), ("1.0.0", True), ("0.8.0-dev", True),
    ("", False), ("dev", False)])
def test_pgvector_older_than_0_8_is_refused(version, supported):
    assert pgvector_supported(version) is supported


def test_versions_compare_as_numbers_not_text():
    assert pgvector_release("0.10.0") == (0, 10, 0)
    assert pgvector_release("0.10.0") > pgvector_release("0.8.6")  # "0.10" < "0.8" as text


def test_a_current_pgvector_installed_or_on_offer_is_no_problem():
    assert pgvector_problem("0.8.6", "0.8.6") is None
    assert pgvector_problem(None, "0.8.0") is None  # CREATE EXTENSION installs it
    assert pgvector_problem("0.10.0", "0.7.4") is None  # what the database has counts


@pytest.mark.parametrize(("installed", "available", "says"), [
    ("0.6.2", "0.8.6", ["pgvector 0.6.2 is installed in this database",
                        "run ALTER EXTENSION vector UPDATE"]),
    ("0.7.4", "0.7.4", ["pgvector 0.7.4 is installed", "upgrade pgvector on the server"]),
    (None, "0.5.1", ["the server offers pgvector 0.5.1", "upgrade pgvector on the server"]),
    (None, None, ["the server has no pgvector"])])
def test_each_refusal_names_what_was_found_the_version_needed_and_the_fix(installed,
                                                                          available, says):
    problem = pgvector_problem(installed, available)
    assert problem is not None and "needs pgvector 0.8 or newer" in problem
    for words in says:
        assert words in problem
