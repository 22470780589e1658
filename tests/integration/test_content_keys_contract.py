"""ContentKeys: one key per memory, the same for every process that shares its index."""

from __future__ import annotations

import stat
import threading
from urllib.parse import urlsplit

import pytest
from postgres_store import select_only

from memory.adapters.postgres import PostgresContentKeys, PostgresDatabase
from memory.adapters.statefiles import FileContentKeys
from memory.ports.content_keys import ContentKeys
from memory.ports.errors import StoreError


@pytest.fixture(params=["file", "postgres"])
def store(request, tmp_path):
    """A factory of adapters over one fresh store: each call is another process's."""
    if request.param == "file":
        return lambda: FileContentKeys(tmp_path / "state")
    url = request.getfixturevalue("test_postgres").fresh()
    return lambda: PostgresContentKeys(PostgresDatabase(url))


def test_every_process_of_one_store_gets_the_same_key_and_another_store_another(store,
                                                                               tmp_path):
    first = store()
    assert isinstance(first, ContentKeys)
    key = first.key()
    assert store().key() == key == first.key()
    other = FileContentKeys(tmp_path / "other-state").key()
    assert other.hash(b"note") != key.hash(b"note") and len(key.hash(b"note")) == 64


def test_processes_asking_at_once_on_a_fresh_store_agree(store):
    keys, errors = [], []

    def ask() -> None:
        try:
            keys.append(store().key())
        except Exception as e:  # noqa: BLE001 - the assertion names it
            errors.append(e)

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [] and len(keys) == 8 and len(set(keys)) == 1


def test_the_key_file_is_owner_only_and_a_damaged_one_is_a_clear_error(tmp_path):
    keys = FileContentKeys(tmp_path / "state")
    key = keys.key()
    assert stat.S_IMODE(keys.path.stat().st_mode) == 0o600
    keys.path.chmod(0o644)
    assert keys.key() == key and stat.S_IMODE(keys.path.stat().st_mode) == 0o600
    assert not list((tmp_path / "state").glob(".content.key.*"))  # no temporary file stays
    keys.path.write_text("not hex\n")
    with pytest.raises(StoreError, match="damaged"):
        keys.key()


def test_a_select_only_server_reads_the_key_the_owner_made(test_postgres):
    url = test_postgres.fresh()
    owner = PostgresDatabase(url)
    key = PostgresContentKeys(owner).key()
    reader = PostgresDatabase(select_only(url, f"aim_keys_{urlsplit(url).path.strip('/')}"))
    assert PostgresContentKeys(reader).key() == key
