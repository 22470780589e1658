"""One generation as a reader sees it: a read transaction on a connection of its own, and
the Note objects, chunk lists and scope masks cached for that generation."""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Generic, TypeVar

import apsw
import numpy as np

from memory.adapters.sqlite.queries import chunk_rows, scope_where
from memory.adapters.sqlite.rows import (CHUNK_COLUMNS, NOTE_COLUMNS, SCOPE_KEYS, IndexDamaged,
                                         chunk_from_row, lines_from_row, note_from_row)
from memory.domain.candidates import Hit
from memory.domain.notes import Chunk, Note
from memory.domain.refresh import GenerationInfo
from memory.domain.scope import ScopeFilter

if TYPE_CHECKING:
    from memory.adapters.sqlite.vector_matrix import MatrixStore, VectorMatrix

K = TypeVar("K")
V = TypeVar("V")

_CHUNKS_OF_NOTES = 4096  # notes whose chunks a generation keeps (hop and graph lookups)
_CHUNKS = 16384  # chunks a generation keeps by rowid (search hits)
_LINES = 512  # notes whose lines a generation keeps (context expansion)
_LINES_CHARS = 64_000  # longer notes are read again each time rather than kept
_SCOPES = 64  # scope clauses whose admitted notes a generation keeps


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

    def put(self, key: K, value: V) -> V:
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self._size:
                self._data.popitem(last=False)
        return value


class GenerationCache:
    """What readers of one generation may share: it never changes within the generation."""

    def __init__(self) -> None:
        self.notes: dict[str, Note] = {}
        self.all: list[Note] | None = None
        self.chunks: LruCache[str, tuple[Chunk, ...]] = LruCache(_CHUNKS_OF_NOTES)
        self.by_rowid: LruCache[int, Chunk] = LruCache(_CHUNKS)
        self.lines: LruCache[str, tuple[str, ...]] = LruCache(_LINES)
        self.scoped: LruCache[tuple, tuple[str, ...]] = LruCache(_SCOPES)
        self.masks: LruCache[tuple, np.ndarray] = LruCache(_SCOPES)
        self.scope_keys: apsw.Connection | None = None
        self.scope_keys_lock = threading.Lock()


class GenerationView:
    """Reads of one generation: `conn` is inside a read transaction that began in it."""

    def __init__(self, conn: apsw.Connection, info: GenerationInfo, seq: int,
                 cache: GenerationCache, vectors: MatrixStore | None):
        self.conn = conn
        self.info = info
        self.id = info.id
        self.seq = seq
        self._cache = cache
        self._vectors = vectors

    def matrix(self, wait: bool = False) -> VectorMatrix | None:
        return self._vectors.get(self, wait) if self._vectors is not None else None

    def notes_for(self, ids: Iterable[str]) -> dict[str, Note]:
        known = self._cache.notes
        wanted = list(dict.fromkeys(ids))
        missing = [i for i in wanted if i not in known]
        if missing:
            sql = (f"SELECT {NOTE_COLUMNS} FROM notes n "
                   f"WHERE n.memory_id IN (SELECT value FROM json_each(?))")
            for row in self.conn.execute(sql, (json.dumps(missing),)):
                note = note_from_row(row)
                known[note.memory_id] = note
        return {i: known[i] for i in wanted if i in known}

    def note(self, memory_id: str) -> Note | None:
        """One note: the graph steps ask for dozens per search, most of them kept already."""
        found = self._cache.notes.get(memory_id)
        return found if found is not None else self.notes_for((memory_id,)).get(memory_id)

    def chunks_of(self, memory_id: str) -> tuple[Chunk, ...]:
        """A note's chunks in order, each checked against its row's CRC."""
        found = self._cache.chunks.get(memory_id)
        if found is None:
            found = tuple(chunk_from_row(row) for row in self.conn.execute(
                f"SELECT {CHUNK_COLUMNS} FROM chunks c WHERE c.memory_id = ? "
                f"ORDER BY c.ordinal", (memory_id,)))
            if any(c.memory_id != memory_id for c in found):
                raise IndexDamaged("index file is damaged: the chunks_by_note index points "
                                   "at chunks of another note")
            self._cache.chunks.put(memory_id, found)
        return found

    def chunks_by_rowid(self, scored: Sequence[tuple[int, float]]) -> list[tuple[Chunk, float]]:
        """The chunks of (rowid, score) pairs, in the order given; kept per generation, so
        a chunk is read (and its CRC checked) once however often it is found."""
        kept = self._cache.by_rowid
        found = {rowid: kept.get(rowid) for rowid, _ in scored}
        read = chunk_rows(self.conn, [rowid for rowid, chunk in found.items() if chunk is None])
        for rowid, chunk in read.items():
            found[rowid] = kept.put(rowid, chunk)
        return [(found[rowid], score) for rowid, score in scored if found[rowid] is not None]

    def lines_of(self, memory_id: str) -> tuple[str, ...]:
        found = self._cache.lines.get(memory_id)
        if found is None:
            row = self.conn.execute("SELECT lines, lines_crc FROM notes WHERE memory_id = ?",
                                    (memory_id,)).fetchone()
            found = lines_from_row(*row) if row else ()
            if row and len(row[0]) <= _LINES_CHARS:
                self._cache.lines.put(memory_id, found)
        return found

    def note_ids_where(self, where: str, params: Sequence) -> tuple[str, ...]:
        """memory_ids of the notes an SQL scope clause admits, by path; kept per clause."""
        key = (where, tuple(params))
        found = self._cache.scoped.get(key)
        if found is None:
            found = self._cache.scoped.put(key, self._admitted_by(where, params))
        return found

    def _admitted_by(self, where: str, params: Sequence) -> tuple[str, ...]:
        """The clause run on the generation's notes cut to the columns a scope clause
        reads, in a database in memory (same column types, same SQL): each row of the
        index's notes table carries its note's lines, so a clause scanned 7 MB (6-10 ms at
        10k notes, paid again by every query naming a ticket); the cut copy costs that
        once. One thread at a time uses the copy's connection."""
        with self._cache.scope_keys_lock:
            if self._cache.scope_keys is None:
                self._cache.scope_keys = self._copy_scope_keys()
            return tuple(r[0] for r in self._cache.scope_keys.execute(
                f"SELECT n.memory_id FROM notes n WHERE {where} ORDER BY n.path", params))

    def _copy_scope_keys(self) -> apsw.Connection:
        names = ("memory_id", "path", *SCOPE_KEYS)
        types = {row[1]: row[2] for row in self.conn.execute("PRAGMA table_info(notes)")}
        keys = apsw.Connection(":memory:")
        keys.execute(f"CREATE TABLE notes ({', '.join(f'{n} {types[n]}' for n in names)})")
        with keys:
            keys.executemany(f"INSERT INTO notes VALUES ({', '.join('?' * len(names))})",
                             self.conn.execute(f"SELECT {', '.join(names)} FROM notes"))
        return keys

    def scope_mask(self, matrix: VectorMatrix, scope: ScopeFilter) -> np.ndarray | None:
        """The matrix rows whose notes the scope admits (None: every row), kept per scope."""
        where, params = scope_where(scope)
        if not where:
            return None
        key = (where, tuple(params))
        found = self._cache.masks.get(key)
        if found is None:
            found = self._cache.masks.put(key, matrix.mask(self.note_ids_where(where, params)))
        return found

    def all_notes(self) -> list[Note]:
        if self._cache.all is None:
            rows = self.conn.execute(f"SELECT {NOTE_COLUMNS} FROM notes n ORDER BY n.path")
            known = self._cache.notes
            self._cache.all = [known.setdefault(row[0], note_from_row(row)) for row in rows]
        return self._cache.all


def hits(view: GenerationView, found: list[tuple[Chunk, float]]) -> list[Hit]:
    """Scored chunks as hits, each with its note (a chunk whose note is gone is dropped)."""
    notes = view.notes_for(chunk.memory_id for chunk, _ in found)
    return [Hit(chunk, notes[chunk.memory_id], score) for chunk, score in found
            if chunk.memory_id in notes]
