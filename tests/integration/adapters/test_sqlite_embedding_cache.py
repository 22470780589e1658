"""SqliteEmbeddingCache: float32 round trips, model separation, several processes at once."""

from __future__ import annotations

import multiprocessing
import os

import apsw
import numpy as np
import pytest

from memory.adapters.sqlite import SqliteEmbeddingCache
from memory.ports.embedding_cache import EmbeddingCache
from memory.ports.errors import StoreError


def test_round_trips_float32_vectors(tmp_path):
    cache = SqliteEmbeddingCache(tmp_path)
    assert isinstance(cache, EmbeddingCache)
    rng = np.random.default_rng(0)
    given = {"h1": rng.standard_normal(384), "h2": [0.1, 0.2, 0.3], "h3": np.ones(4, np.float32)}
    cache.put_many("model-a", given)
    got = cache.get_many("model-a", ["h1", "h2", "h3", "missing", "h1"])
    assert set(got) == {"h1", "h2", "h3"}
    for key, vector in given.items():
        assert np.array_equal(np.asarray(got[key]), np.asarray(vector, dtype=np.float32))
        assert len(got[key]) == len(vector)
    assert (tmp_path / "cache" / "embeddings.sqlite").is_file()


def test_models_do_not_mix_and_later_writes_win(tmp_path):
    cache = SqliteEmbeddingCache(tmp_path)
    cache.put_many("model-a", {"h": [1.0, 0.0]})
    assert cache.get_many("model-b", ["h"]) == {}
    cache.put_many("model-a", {"h": [0.0, 1.0]})
    assert list(SqliteEmbeddingCache(tmp_path).get_many("model-a", ["h"])["h"]) == [0.0, 1.0]
    cache.put_many("model-a", {})
    assert cache.get_many("model-a", []) == {}


def test_many_hashes_in_one_call(tmp_path):
    cache = SqliteEmbeddingCache(tmp_path)
    vectors = {f"h{i}": [float(i), 1.0] for i in range(2_000)}
    cache.put_many("m", vectors)
    got = cache.get_many("m", list(vectors))
    assert len(got) == 2_000 and list(got["h1999"]) == [1999.0, 1.0]


def test_bad_vectors_are_refused(tmp_path):
    with pytest.raises(StoreError):
        SqliteEmbeddingCache(tmp_path).put_many("m", {"h": [float("nan")]})


def _writer(state: str, worker: int) -> None:
    cache = SqliteEmbeddingCache(state)
    for batch in range(20):
        cache.put_many("m", {f"w{worker}-{batch}-{i}": [float(worker), float(i)] for i in range(50)})


def test_several_processes_write_at_once(tmp_path):
    ctx = multiprocessing.get_context("spawn")
    workers = [ctx.Process(target=_writer, args=(str(tmp_path), w)) for w in range(3)]
    for p in workers:
        p.start()
    for p in workers:
        p.join(60)
    assert [p.exitcode for p in workers] == [0, 0, 0]
    keys = [f"w{w}-{b}-{i}" for w in range(3) for b in range(20) for i in range(50)]
    assert len(SqliteEmbeddingCache(tmp_path).get_many("m", keys)) == len(keys)


def test_a_garbage_cache_file_is_dropped_and_the_cache_starts_empty(tmp_path):
    path = tmp_path / "cache" / "embeddings.sqlite"
    path.parent.mkdir()
    path.write_bytes(b"not a database" * 1000)
    cache = SqliteEmbeddingCache(tmp_path)
    assert cache.get_many("m", ["h"]) == {}  # a miss: the chunk is embedded again
    cache.put_many("m", {"h": [1.0, 2.0]})
    assert list(SqliteEmbeddingCache(tmp_path).get_many("m", ["h"])["h"]) == [1.0, 2.0]


def _flip_inside(path, needle: bytes) -> None:
    """Flip one byte in the middle of `needle` where the file holds it; mtime kept."""
    st = path.stat()
    data = bytearray(path.read_bytes())
    at = data.find(needle)
    assert at >= 0
    data[at + len(needle) // 2] ^= 0x10
    path.write_bytes(bytes(data))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_a_vector_with_flipped_bytes_is_a_miss_never_served(tmp_path):
    cache = SqliteEmbeddingCache(tmp_path)
    marked = np.full(64, 1234.5678, np.float32)
    cache.put_many("m", {"good": np.ones(64, np.float32), "marked": marked})
    cache.close()  # the last connection folds the WAL into the file
    _flip_inside(tmp_path / "cache" / "embeddings.sqlite", marked.tobytes())
    fresh = SqliteEmbeddingCache(tmp_path)
    got = fresh.get_many("m", ["good", "marked"])
    assert set(got) == {"good"} and list(got["good"]) == [1.0] * 64
    assert fresh.get_many("m", ["marked"]) == {}  # and it stays a miss until written again
    fresh.put_many("m", {"marked": marked})
    assert np.array_equal(np.asarray(fresh.get_many("m", ["marked"])["marked"]), marked)


def test_a_cache_of_an_earlier_version_is_read_and_sealed(tmp_path):
    path = tmp_path / "cache" / "embeddings.sqlite"
    path.parent.mkdir()
    old = apsw.Connection(str(path))
    old.execute("CREATE TABLE embeddings (model_id TEXT NOT NULL, hash TEXT NOT NULL, "
                "vector BLOB NOT NULL, PRIMARY KEY (model_id, hash)) WITHOUT ROWID")
    old.executemany("INSERT INTO embeddings VALUES (?, ?, ?)",
                    [("m", "kept", np.ones(8, np.float32).tobytes()), ("m", "torn", b"abc"),
                     ("m", "nan", np.full(8, np.nan, np.float32).tobytes())])
    old.close()
    cache = SqliteEmbeddingCache(tmp_path)
    assert list(cache.get_many("m", ["kept", "torn", "nan"])) == ["kept"]
    cache.close()
    sealed = apsw.Connection(str(path)).execute(
        "SELECT hash, crc IS NOT NULL FROM embeddings ORDER BY hash").fetchall()
    assert sealed == [("kept", 1)]  # the unusable rows are gone, the good one sealed
