"""The TokenStore contract, run against the in-memory fake AND the JSON file in the state folder."""

from __future__ import annotations

import threading

import pytest

from memory.adapters.inmemory import InMemoryTokenStore
from memory.adapters.statefiles import JsonTokenStore
from memory.domain.errors import InvalidRequest
from memory.domain.tokens import ApiToken, TokenScope
from memory.ports.errors import StoreError
from memory.ports.token_store import TokenStore


def token(name: str, token_id: str, scope: TokenScope = TokenScope.READ) -> ApiToken:
    return ApiToken.issue(name=name, scope=scope, token_id=token_id, secret=f"secret-{name}",
                          salt=bytes(16), created="2026-01-01T00:00:00+00:00")


@pytest.fixture(params=["inmemory", "statefiles"])
def store(request, tmp_path) -> TokenStore:
    return InMemoryTokenStore() if request.param == "inmemory" else JsonTokenStore(tmp_path)


def test_a_token_is_found_by_its_id_as_stored(store):
    issued = token("ci", "0123456789abcdef", TokenScope.WRITE)
    assert isinstance(store, TokenStore)
    store.add(issued)
    assert store.find("0123456789abcdef") == issued
    assert store.find("fedcba9876543210") is None
    assert store.all() == (issued,)


def test_names_are_unique_and_kept_in_order(store):
    store.add(token("a", "000000000000000a"))
    store.add(token("b", "000000000000000b"))
    with pytest.raises(InvalidRequest, match="exists"):
        store.add(token("a", "000000000000000c"))
    assert [t.name for t in store.all()] == ["a", "b"]


def test_revoking_removes_the_token_and_says_whether_there_was_one(store):
    store.add(token("a", "000000000000000a"))
    assert store.remove("a") is True
    assert store.find("000000000000000a") is None and store.all() == ()
    assert store.remove("a") is False


def test_another_process_sees_additions_and_revocations_at_once(tmp_path):
    server, cli = JsonTokenStore(tmp_path), JsonTokenStore(tmp_path)
    assert server.all() == ()
    cli.add(token("a", "000000000000000a"))
    assert server.find("000000000000000a") is not None
    cli.remove("a")
    assert server.find("000000000000000a") is None


def test_concurrent_creations_lose_none(tmp_path):
    def add(n: int) -> None:
        JsonTokenStore(tmp_path).add(token(f"t{n}", f"{n:016x}"))
    threads = [threading.Thread(target=add, args=(n,)) for n in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(JsonTokenStore(tmp_path).all()) == 12


def test_a_damaged_file_is_a_clear_error_not_an_empty_store(tmp_path):
    (tmp_path / "tokens.json").write_text("{not json")
    with pytest.raises(StoreError, match="tokens.json is unreadable"):
        JsonTokenStore(tmp_path).all()
