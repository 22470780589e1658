"""The live database's vectors held in memory for KNN by one matrix product, patched forward
generation by generation from the change log.

sqlite-vec's distance function over chunk_vectors scans every row per query (~25 ms at
30k x 384); the same vectors as one numpy matrix answer in about 2 ms. The matrix is read
once per process (a fraction of a second, on a thread of its own, so searches use SQL
meanwhile). After that a generation costs what it changed: the rows it added are read and
appended, the rows it removed are masked out, and dead rows are compacted away once they
are a quarter of the matrix. A version never changes once made, so a search keeps using
the version of its own snapshot while the next one is built.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from typing import Protocol

import apsw
import numpy as np

from memory.adapters.sqlite.connection import DAMAGE
from memory.adapters.sqlite.rows import IndexDamaged, opened, vector_from_row
from memory.adapters.sqlite.schema import vector_dimension

log = logging.getLogger(__name__)

_VECTORS = ("SELECT v.rowid, v.embedding, v.crc, c.memory_id FROM chunk_vectors v "
            "JOIN chunks c ON c.rowid = v.rowid")
_VERSIONS = 3  # versions kept: the newest and those a slower search may still be using


class Snapshot(Protocol):
    seq: int
    conn: apsw.Connection


class VectorMatrix:
    """Unit-length rows in rowid order (some of them dead), each row's note, cosine KNN."""

    def __init__(self, seq: int, rowids: np.ndarray, buffer: np.ndarray, count: int,
                 alive: np.ndarray | None, note_of_row: np.ndarray, note_index: dict[str, int]):
        self.seq = seq
        self.rowids = rowids
        self._buffer = buffer  # rows past `count` are free, or belong to a newer version
        self.matrix = buffer[:count]
        self.alive = alive  # None: every row is alive
        self.note_of_row = note_of_row
        self._note_index = note_index  # append-only, shared by the versions of one matrix

    @classmethod
    def load(cls, conn: apsw.Connection, seq: int) -> VectorMatrix | None:
        """Every vector of the snapshot conn is in, checked against its CRC."""
        dimension = vector_dimension(conn)
        count = conn.execute("SELECT count(*) FROM chunk_vectors").fetchone()[0]
        if not dimension or not count:
            return None
        # Row by row into one preallocated matrix: no list of blobs, no joined copy.
        buffer = np.empty((count + _headroom(count), dimension), dtype=np.float32)
        rowids = np.empty(count, dtype=np.int64)
        notes: list[str] = []
        for i, (rowid, blob, stored, memory_id) in enumerate(
                conn.execute(_VECTORS + " ORDER BY v.rowid")):
            if i >= count:
                break
            rowids[i] = rowid
            buffer[i] = _unit(vector_from_row(rowid, blob, stored), dimension)
            notes.append(memory_id)
        index: dict[str, int] = {}
        note_of_row = np.fromiter((index.setdefault(m, len(index)) for m in notes),
                                  dtype=np.int32, count=len(notes))
        return cls(seq, rowids[:len(notes)], buffer, len(notes), None, note_of_row, index)

    @property
    def dimension(self) -> int:
        return int(self.matrix.shape[1])

    @property
    def dead(self) -> int:
        return 0 if self.alive is None else int(len(self.alive) - self.alive.sum())

    def patched(self, seq: int, removed: Iterable[int],
                added: Sequence[tuple[int, bytes, str]]) -> VectorMatrix:
        """The next version: `removed` rowids dead, `added` (rowid, vector, note) appended."""
        count = len(self.rowids)
        alive = np.ones(count, dtype=bool) if self.alive is None else self.alive.copy()
        gone = np.asarray(sorted(set(removed)), dtype=np.int64)
        if gone.size and count:
            at = np.minimum(np.searchsorted(self.rowids, gone), max(count - 1, 0))
            alive[at[self.rowids[at] == gone]] = False
        buffer = self._buffer
        total = count + len(added)
        if total > len(buffer):
            buffer = np.empty((total + _headroom(total), self.dimension), dtype=np.float32)
            buffer[:count] = self.matrix
        for i, (_, blob, _) in enumerate(added):
            buffer[count + i] = _unit(blob, self.dimension)
        rowids = np.concatenate([self.rowids, np.asarray([a[0] for a in added], np.int64)])
        notes = np.concatenate([self.note_of_row, np.fromiter(
            (self._note_index.setdefault(a[2], len(self._note_index)) for a in added),
            dtype=np.int32, count=len(added))])
        alive = np.concatenate([alive, np.ones(len(added), dtype=bool)])
        version = VectorMatrix(seq, rowids, buffer, total, alive, notes, self._note_index)
        return version.compacted() if version.dead * 4 > total else version

    def compacted(self) -> VectorMatrix:
        keep = self.alive if self.alive is not None else np.ones(len(self.rowids), dtype=bool)
        count = int(keep.sum())
        buffer = np.empty((count + _headroom(count), self.dimension), dtype=np.float32)
        buffer[:count] = self.matrix[keep]
        return VectorMatrix(self.seq, self.rowids[keep], buffer, count, None,
                            self.note_of_row[keep], self._note_index)

    def mask(self, admitted_notes: Iterable[str]) -> np.ndarray:
        """Live rows whose note is among `admitted_notes`."""
        notes = np.zeros(len(self._note_index), dtype=bool)
        notes[[self._note_index[m] for m in admitted_notes if m in self._note_index]] = True
        rows = notes[self.note_of_row]
        return rows if self.alive is None else rows & self.alive

    def admitted_rowids(self, rowids: Sequence[int], mask: np.ndarray | None) -> set[int] | None:
        """Those of `rowids` whose note the mask admits; None when one has no live row here."""
        wanted = np.asarray(rowids, dtype=np.int64)
        if wanted.size == 0:
            return set()
        if not len(self.rowids):
            return None
        at = np.minimum(np.searchsorted(self.rowids, wanted), len(self.rowids) - 1)
        if not np.array_equal(self.rowids[at], wanted) or (
                self.alive is not None and not self.alive[at].all()):
            return None
        return set(wanted.tolist()) if mask is None else set(wanted[mask[at]].tolist())

    def nearest(self, vector: Sequence[float], mask: np.ndarray | None,
                limit: int) -> list[tuple[int, float]]:
        """(rowid, cosine similarity) of the `limit` closest admitted rows, best first;
        ties go to the lower rowid, as the SQL query orders them."""
        query = np.asarray(vector, dtype=np.float32)
        norm = float(np.linalg.norm(query))
        if limit <= 0 or norm == 0.0:
            return []
        # einsum's own SIMD loop, not BLAS: OpenBLAS's sgemv splits this product over
        # threads that wait on each other on a busy machine (8.5 ms CPU at 30k x 384,
        # 28 ms wall at load 5, against 2.1 ms CPU here); one thread is also what the
        # query's embedding, on the other core, leaves free.
        scores = np.einsum("ij,j->i", self.matrix, query / norm)
        admitted = mask if mask is not None else self.alive
        candidates = np.flatnonzero(admitted) if admitted is not None else np.arange(len(scores))
        if candidates.size == 0:
            return []
        chosen = scores[candidates]
        if candidates.size > limit:
            keep = np.argpartition(-chosen, limit - 1)[:limit]
            candidates, chosen = candidates[keep], chosen[keep]
        order = np.lexsort((self.rowids[candidates], -chosen))
        return [(int(self.rowids[candidates[i]]), float(chosen[i])) for i in order]


def overlay_nearest(conn: apsw.Connection, base: VectorMatrix, removed: set[int],
                    added: set[int], vector: Sequence[float],
                    limit: int) -> list[tuple[int, float]]:
    """KNN over a stage: the base generation's matrix without the rows the stage removed,
    plus the rows it added (read in its own transaction). The same ranking as a scan of
    the staged table, at the cost of the change."""
    query = np.asarray(vector, dtype=np.float32)
    norm = float(np.linalg.norm(query))
    if limit <= 0 or norm == 0.0:
        return []
    mask = np.ones(len(base.rowids), dtype=bool) if base.alive is None else base.alive.copy()
    mask &= ~np.isin(base.rowids, np.fromiter(removed, dtype=np.int64, count=len(removed)))
    found = base.nearest(query, mask, limit)
    for rowid, blob, stored in conn.execute(
            "SELECT rowid, embedding, crc FROM chunk_vectors WHERE rowid IN "
            "(SELECT value FROM json_each(?))", (json.dumps(sorted(added)),)):
        row = _unit(vector_from_row(rowid, blob, stored), base.dimension)
        found.append((rowid, float(row @ (query / norm))))
    return sorted(found, key=lambda hit: (-hit[1], hit[0]))[:limit]


def _headroom(count: int) -> int:
    return max(256, count // 8)


def _unit(blob: bytes, dimension: int) -> np.ndarray:
    row = np.frombuffer(blob, dtype=np.float32)
    if row.size != dimension:
        raise IndexDamaged(f"index file is damaged: a vector of {row.size} dimensions in an "
                           f"index of {dimension}")
    norm = float(np.linalg.norm(row))
    return row / norm if norm > 0 else row


def changes(conn: apsw.Connection, after: int, upto: int) -> tuple[set[int], list] | None:
    """(rowids removed, (rowid, vector, note) added) between two generations of conn's
    snapshot; None when the log no longer reaches back to `after`."""
    oldest = conn.execute("SELECT min(seq) FROM generations").fetchone()[0]
    if oldest is None or oldest > after + 1:
        return None
    removed, added = set(), []
    for row in conn.execute("SELECT seq, rowid, added, crc FROM chunk_log "
                            "WHERE seq > ? AND seq <= ?", (after, upto)):
        _, rowid, was_added = opened(row, "chunk log")
        (added.append if was_added else removed.add)(rowid)
    fresh = set(added) - removed
    rows = [(rowid, vector_from_row(rowid, blob, stored), memory_id)
            for rowid, blob, stored, memory_id in conn.execute(
                _VECTORS + " WHERE v.rowid IN (SELECT value FROM json_each(?)) ORDER BY v.rowid",
                (json.dumps(sorted(fresh)),))]
    return removed, rows


class MatrixStore:
    """The matrix versions of one database, loaded once and patched forward."""

    def __init__(self, snapshot: Callable[[], AbstractContextManager[Snapshot | None]],
                 on_damage: Callable[[str], None]):
        self._snapshot = snapshot
        self._on_damage = on_damage
        self._lock = threading.Lock()
        self._versions: OrderedDict[int, VectorMatrix] = OrderedDict()
        self._thread: threading.Thread | None = None
        self.error: str | None = None

    def get(self, view: Snapshot, wait: bool = False) -> VectorMatrix | None:
        """The version of view's generation: kept, patched from an older one in view's own
        snapshot, or None while the first load runs (the caller falls back to SQL)."""
        found = self._kept_or_patched(view)
        loading = self._thread
        if found is None and wait and loading is not None:
            loading.join()
            found = self._kept_or_patched(view)
        return found

    def kept(self, seq: int) -> VectorMatrix | None:
        """The version of generation `seq` if this process holds it; never loads."""
        with self._lock:
            return self._versions.get(seq)

    def advance(self, base: VectorMatrix, seq: int, removed: set[int],
                added: Sequence[tuple[int, bytes, str]]) -> None:
        """Keep the version this process's own refresh just committed, made from what the
        stage changed (nothing is read back), so the next refresh's self-check and the
        next search find it ready."""
        with self._lock:
            newest = next(reversed(self._versions.values()), None)
            if newest is base:
                self._keep(base.patched(seq, removed, added))

    def _kept_or_patched(self, view: Snapshot) -> VectorMatrix | None:
        with self._lock:
            if view.seq in self._versions:
                return self._versions[view.seq]
            base = next(reversed(self._versions.values()), None)
            if base is not None and base.seq < view.seq:
                delta = changes(view.conn, base.seq, view.seq)
                if delta is not None:
                    return self._keep(base.patched(view.seq, *delta))
            if base is None and vector_dimension(view.conn) is None:
                return None  # nothing to load: the generation has no vectors
            if base is None or base.seq < view.seq:
                self._start_load()
            return None

    def _keep(self, version: VectorMatrix) -> VectorMatrix:
        self._versions[version.seq] = version
        while len(self._versions) > _VERSIONS:
            self._versions.popitem(last=False)
        return version

    def _start_load(self) -> None:
        if self._thread is not None and self._thread.is_alive():
            return
        if self.error is not None:  # loaded once and failed: SQL keeps answering
            return
        self._thread = threading.Thread(target=self._load, daemon=True, name="vector-matrix")
        self._thread.start()

    def _load(self) -> None:
        try:
            with self._snapshot() as view:
                version = VectorMatrix.load(view.conn, view.seq) if view is not None else None
            if version is not None:
                with self._lock:
                    if not self._versions or max(self._versions) < version.seq:
                        self._versions.clear()
                        self._keep(version)
        except DAMAGE as exc:
            self.error = f"{type(exc).__name__}: {exc}"
            self._on_damage(f"the index's vectors failed while loading: {exc}")
        except Exception as exc:  # noqa: BLE001 - SQL keeps answering, with the same ranking
            self.error = f"{type(exc).__name__}: {exc}"
            log.warning("vectors stay in SQLite: %s", self.error)
