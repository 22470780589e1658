"""Fixtures of the reliability tests."""

from __future__ import annotations

import pytest
from live_root import LiveRoot, warm_model

from memory.entrypoints.container import build
from memory.entrypoints.settings import Settings


@pytest.fixture(scope="session")
def warm(tmp_path_factory) -> None:
    """The embedding model exported and loadable before any test starts processes."""
    warm_model(tmp_path_factory.mktemp("warm"))


@pytest.fixture(scope="session")
def embedder(warm, tmp_path_factory):
    """One loaded embedding model for the in-process services of every test."""
    root = LiveRoot.create(tmp_path_factory.mktemp("embedder") / "memory", {})
    model = build(Settings.resolve(str(root.path), watch=False)).gateways.embedder()
    assert model.wait_ready(300), model.state()
    return model


@pytest.fixture(params=["sqlite", "postgres"])
def store(request) -> str | None:
    """Where the index lives: None for SQLite in the state folder, else a fresh Postgres
    database (tests/integration/postgres_store.py; never skipped)."""
    return request.getfixturevalue("test_postgres").fresh() if request.param == "postgres" \
        else None


@pytest.fixture(scope="module")
def anyio_backend():
    return "asyncio"
