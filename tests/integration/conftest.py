"""Fixtures shared by the integration tests: the test Postgres (see postgres_store.py)."""

from __future__ import annotations

import pytest

from postgres_store import TestPostgres


@pytest.fixture(scope="session")
def test_postgres():
    server = TestPostgres()
    yield server
    server.stop()
