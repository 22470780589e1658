"""--store / AI_MEMORY_STORE: a Postgres URL or nothing, refused clearly otherwise."""

from __future__ import annotations

import pytest

from memory.domain.errors import InvalidRequest
from memory.entrypoints.settings import STORE_ENV, Settings


def test_no_store_means_the_sqlite_index(tmp_path, monkeypatch):
    monkeypatch.delenv(STORE_ENV, raising=False)
    assert Settings.resolve(str(tmp_path)).store is None


def test_the_flag_wins_over_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv(STORE_ENV, "postgresql://env@db/memory")
    assert Settings.resolve(str(tmp_path)).store == "postgresql://env@db/memory"
    flag = Settings.resolve(str(tmp_path), store="postgres://flag@db/memory")
    assert flag.store == "postgres://flag@db/memory"


@pytest.mark.parametrize("url", ["mysql://u:secret@db/memory", "db/memory", "sqlite:///x.db"])
def test_a_store_that_is_not_postgres_is_refused_without_echoing_it(tmp_path, url):
    with pytest.raises(InvalidRequest, match="postgresql:// URL") as refused:
        Settings.resolve(str(tmp_path), store=url)
    assert "secret" not in str(refused.value)
