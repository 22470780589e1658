"""One open, immutable index generation with its per-generation caches of notes."""

from __future__ import annotations

import json
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Generic, TypeVar

import apsw
import numpy as np

from memory.adapters.sqlite.connection import open_published, store_errors
from memory.adapters.sqlite.schema import (CHUNK_COLUMNS, NOTE_COLUMNS, SCHEMA_VERSION,
                                           chunk_from_row, manifest_of, note_from_row,
                                           read_meta)
from memory.adapters.sqlite.queries import scope_where
from memory.adapters.sqlite.vector_matrix import MatrixLoader, VectorMatrix
from memory.domain.notes import Chunk, Note
from memory.domain.scope import ScopeFilter
from memory.domain.refresh import GenerationInfo, ManifestEntry
from memory.ports.errors import StoreError

K = TypeVar("K")
V = TypeVar("V")


class LazyManifest(Mapping[str, ManifestEntry]):
    """Reads the manifest table on first use: most callers of current() need only the id."""

    def __init__(self, load: Callable[[], dict[str, ManifestEntry]]):
        self._load = load
        self._data: dict[str, ManifestEntry] | None = None

    def _entries(self) -> dict[str, ManifestEntry]:
        if self._data is None:
            self._data = self._load()
        return self._data

    def __getitem__(self, key: str) -> ManifestEntry:
        return self._entries()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries())

    def __len__(self) -> int:
        return len(self._entries())


def load_manifest(path: Path) -> dict[str, ManifestEntry]:
    """Manifest of a published file through its own short-lived connection (any thread)."""
    conn = open_published(path, vec=False)
    try:
        with store_errors(f"cannot read manifest of {path.name}"):
            return manifest_of(conn)
    finally:
        conn.close()


def info_from_meta(meta: Mapping, manifest: Mapping[str, ManifestEntry]) -> GenerationInfo:
    return GenerationInfo(
        id=meta["id"], created=meta.get("created", ""), notes=meta.get("notes", 0),
        chunks=meta.get("chunks", 0), vectors=meta.get("vectors", 0),
        model_id=meta.get("model_id"), dimension=meta.get("dimension"),
        schema_version=meta.get("schema_version", 0), chunking=meta.get("chunking"),
        manifest=manifest)


_CHUNKS_OF_NOTES = 4096  # notes whose chunks a view keeps (hop and graph lookups)
_SCOPES = 64  # scope clauses whose admitted notes a view keeps


class LruCache(Generic[K, V]):
    """A small thread-safe least-recently-used map."""

    def __init__(self, size: int):
        self._size = size
        self._data: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            if key not in self._data:
                return None
            self._data.move_to_end(key)
            return self._data[key]

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self._size:
                self._data.popitem(last=False)


def file_signature(path: Path) -> tuple | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


class GenerationView:
    """A read-only connection to one generation; Note objects are cached per generation."""

    def __init__(self, gen_id: str, path: Path):
        self.id = gen_id
        self.path = path
        self.conn: apsw.Connection = open_published(path)
        try:
            with store_errors(f"index generation {gen_id} is unreadable"):
                meta = read_meta(self.conn)
            if meta.get("schema_version") != SCHEMA_VERSION or meta.get("id") != gen_id:
                raise StoreError(f"index generation {gen_id} has schema "
                                 f"{meta.get('schema_version')!r} and id {meta.get('id')!r}; "
                                 f"expected schema {SCHEMA_VERSION}")
        except BaseException:
            self.conn.close()
            raise
        self.info = info_from_meta(meta, LazyManifest(lambda: load_manifest(path)))
        self._notes: dict[str, Note] = {}
        self._all: list[Note] | None = None
        self.signature = file_signature(path)
        self.vectors = MatrixLoader(path)
        self._chunks: LruCache[str, tuple[Chunk, ...]] = LruCache(_CHUNKS_OF_NOTES)
        self._scoped: LruCache[tuple, tuple[str, ...]] = LruCache(_SCOPES)
        self._masks: LruCache[tuple, np.ndarray] = LruCache(_SCOPES)

    def close(self) -> None:
        self.conn.close()

    def changed_on_disk(self) -> bool:
        """A published file is never written again: any change to it is damage, even when
        the pages this process reads (or holds in memory) still look fine."""
        return file_signature(self.path) != self.signature

    def notes_for(self, ids: Iterable[str]) -> dict[str, Note]:
        wanted = list(dict.fromkeys(ids))
        missing = [i for i in wanted if i not in self._notes]
        if missing:
            sql = (f"SELECT {NOTE_COLUMNS} FROM notes n "
                   f"WHERE n.memory_id IN (SELECT value FROM json_each(?))")
            for row in self.conn.execute(sql, (json.dumps(missing),)):
                note = note_from_row(row)
                self._notes[note.memory_id] = note
        return {i: self._notes[i] for i in wanted if i in self._notes}

    def chunks_of(self, memory_id: str) -> tuple[Chunk, ...]:
        """A note's chunks in order; the generation never changes, so they are kept."""
        found = self._chunks.get(memory_id)
        if found is None:
            found = tuple(chunk_from_row(row) for row in self.conn.execute(
                f"SELECT {CHUNK_COLUMNS} FROM chunks c WHERE c.memory_id = ? "
                f"ORDER BY c.ordinal", (memory_id,)))
            self._chunks.put(memory_id, found)
        return found

    def note_ids_where(self, where: str, params: Sequence) -> tuple[str, ...]:
        """memory_ids of the notes an SQL scope clause admits, by path; kept per clause."""
        key = (where, tuple(params))
        found = self._scoped.get(key)
        if found is None:
            found = tuple(r[0] for r in self.conn.execute(
                f"SELECT n.memory_id FROM notes n WHERE {where} ORDER BY n.path", params))
            self._scoped.put(key, found)
        return found

    def scope_mask(self, matrix: VectorMatrix, scope: ScopeFilter) -> np.ndarray | None:
        """The matrix rows whose notes the scope admits (None: every row), kept per scope."""
        where, params = scope_where(scope)
        if not where:
            return None
        key = (where, tuple(params))
        found = self._masks.get(key)
        if found is None:
            found = matrix.mask(self.note_ids_where(where, params))
            self._masks.put(key, found)
        return found

    def all_notes(self) -> list[Note]:
        if self._all is None:
            rows = self.conn.execute(f"SELECT {NOTE_COLUMNS} FROM notes n ORDER BY n.path")
            self._all = [self._notes.setdefault(row[0], note_from_row(row)) for row in rows]
        return self._all
