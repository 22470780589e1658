"""The vectors of one published generation held in memory, for KNN by one matrix product.

sqlite-vec scans its vec0 table per query and, for a scope, checks each row against a
`rowid IN (...)` set: 64 ms at 10k notes for the default (active) scope. The same
30k x 384 float32 vectors as one numpy matrix answer in about 2 ms. A published generation
never changes, so its matrix is read once (about 0.2 s, on a thread of its own so searches
keep using sqlite-vec meanwhile) and dropped with the generation.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from memory.adapters.sqlite.connection import open_published
from memory.adapters.sqlite.queries import vector_dimension
from memory.adapters.sqlite.schema import has_vectors

log = logging.getLogger(__name__)


class VectorMatrix:
    """Unit-length rows in rowid order, each row's note, and cosine KNN within a mask."""

    def __init__(self, rowids: np.ndarray, matrix: np.ndarray, notes: Sequence[str]):
        self.rowids = rowids
        self.matrix = matrix
        self._note_index = {memory_id: i for i, memory_id in enumerate(dict.fromkeys(notes))}
        self.note_of_row = np.fromiter((self._note_index[m] for m in notes), dtype=np.int32,
                                       count=len(notes))

    @classmethod
    def load(cls, path: Path) -> VectorMatrix | None:
        """Read every vector of a published file through its own connection (any thread)."""
        conn = open_published(path)
        try:
            if not has_vectors(conn):
                return None
            count = conn.execute("SELECT count(*) FROM chunk_vec").fetchone()[0]
            dimension = vector_dimension(conn)
            if not count or not dimension:
                return None
            # Row by row into one preallocated matrix: no list of blobs, no joined copy
            # (those tripled the memory of the load).
            matrix = np.empty((count, dimension), dtype=np.float32)
            rowids = np.empty(count, dtype=np.int64)
            notes: list[str] = []
            rows = conn.execute("SELECT v.rowid, v.embedding, c.memory_id FROM chunk_vec v "
                                "JOIN chunks c ON c.rowid = v.rowid ORDER BY v.rowid")
            for i, (rowid, blob, memory_id) in enumerate(rows):
                if i >= count:
                    break
                rowids[i] = rowid
                matrix[i] = np.frombuffer(blob, dtype=np.float32)
                notes.append(memory_id)
        finally:
            conn.close()
        if len(notes) < count:  # vectors without a chunk row: keep the ones that have one
            matrix, rowids = matrix[: len(notes)], rowids[: len(notes)]
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        np.divide(matrix, np.where(norms > 0, norms, 1.0), out=matrix)
        return cls(rowids, matrix, notes)

    @property
    def dimension(self) -> int:
        return int(self.matrix.shape[1])

    def mask(self, admitted_notes: Iterable[str]) -> np.ndarray:
        """Rows whose note is among `admitted_notes`."""
        notes = np.zeros(len(self._note_index), dtype=bool)
        notes[[self._note_index[m] for m in admitted_notes if m in self._note_index]] = True
        return notes[self.note_of_row]

    def admitted_rowids(self, rowids: Sequence[int], mask: np.ndarray | None) -> set[int] | None:
        """Those of `rowids` whose note the mask admits; None when one has no row here."""
        wanted = np.asarray(rowids, dtype=np.int64)
        if wanted.size == 0:
            return set()
        at = np.minimum(np.searchsorted(self.rowids, wanted), len(self.rowids) - 1)
        if not np.array_equal(self.rowids[at], wanted):
            return None
        return set(wanted.tolist()) if mask is None else set(wanted[mask[at]].tolist())

    def nearest(self, vector: Sequence[float], mask: np.ndarray | None,
                limit: int) -> list[tuple[int, float]]:
        """(rowid, cosine similarity) of the `limit` closest admitted rows, best first;
        ties go to the lower rowid, as the sqlite-vec query orders them."""
        query = np.asarray(vector, dtype=np.float32)
        norm = float(np.linalg.norm(query))
        if limit <= 0 or norm == 0.0:
            return []
        scores = self.matrix @ (query / norm)
        candidates = np.flatnonzero(mask) if mask is not None else np.arange(len(scores))
        if candidates.size == 0:
            return []
        chosen = scores[candidates]
        if candidates.size > limit:
            keep = np.argpartition(-chosen, limit - 1)[:limit]
            candidates, chosen = candidates[keep], chosen[keep]
        order = np.lexsort((self.rowids[candidates], -chosen))
        return [(int(self.rowids[candidates[i]]), float(chosen[i])) for i in order]


class MatrixLoader:
    """Loads one generation's matrix once, in the background; `get()` never waits unless
    asked to, so the first searches of a new generation go through sqlite-vec."""

    def __init__(self, path: Path):
        self._path = path
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._matrix: VectorMatrix | None = None
        self._done = threading.Event()
        self.error: str | None = None

    def get(self, wait: bool = False) -> VectorMatrix | None:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._load, daemon=True,
                                                name="vector-matrix")
                self._thread.start()
        if wait:
            self._done.wait()
        return self._matrix

    def _load(self) -> None:
        try:
            self._matrix = VectorMatrix.load(self._path)
        except Exception as exc:  # noqa: BLE001 - sqlite-vec keeps answering, same ranking
            self.error = f"{type(exc).__name__}: {exc}"
            log.warning("vectors of %s stay in sqlite-vec: %s", self._path.name, self.error)
        finally:
            self._done.set()
