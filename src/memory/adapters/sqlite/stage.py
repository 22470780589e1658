"""SqliteIndexStage: one refresh's write transaction, committed by publish().

An incremental stage edits the live database inside one transaction: readers keep seeing
the generation before it until the COMMIT, a failed validation is a rollback, and a
refresh killed mid-way leaves an uncommitted transaction SQLite discards. A full build
writes a new database file under staging/ that CURRENT switches to (publisher.py).
What a stage changed is logged per generation, so readers patch their vectors and
manifests by it; its validation checks the rows it wrote, not the whole corpus.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager

import apsw

from memory.adapters.sqlite import rows, schema
from memory.adapters.sqlite.connection import store_errors
from memory.adapters.sqlite.queries import as_blob, chunks_by_rowid, lexical, nearest
from memory.adapters.sqlite.vector_matrix import MatrixStore, overlay_nearest
from memory.domain.note_keys import NoteKeys
from memory.domain.notes import NoteDocument
from memory.domain.refresh import GenerationInfo, ManifestEntry
from memory.ports.errors import DuplicateNote, StoreError
from memory.ports.index_generations import IndexStage, StagedFacts


class SqliteIndexStage(IndexStage):
    """Built by SqliteGenerations.stage(); `publish(stage, meta)` seals and makes it current."""

    def __init__(self, gen_id: str, conn: apsw.Connection, seq: int,
                 base: Mapping[str, ManifestEntry],
                 publish: Callable[[SqliteIndexStage, dict], GenerationInfo],
                 discard: Callable[[SqliteIndexStage], None], full: bool,
                 matrices: MatrixStore | None = None):
        self._id = gen_id
        self.conn: apsw.Connection | None = conn
        self.seq = seq
        self.full = full
        self._base = base
        self._publish, self._discard = publish, discard
        self._edits: dict[str, ManifestEntry | None] = {}  # path -> entry now (None: gone)
        self.added: set[int] = set()  # chunk rowids
        self.removed: set[int] = set()
        self.vectors: dict[int, tuple[bytes, str]] = {}  # rowid -> (vector, note) added
        self._touched: set[str] = set()  # memory_ids written
        # The base generation's vectors when this process holds them in memory: the
        # self-check runs against them, and the publish advances them by the change.
        self.matrices = matrices
        self.base_matrix = matrices.kept(seq - 1) if matrices is not None else None

    @property
    def id(self) -> str:
        return self._id

    def manifest(self) -> Mapping[str, ManifestEntry]:
        manifest = dict(self._base)
        for path, entry in self._edits.items():
            if entry is None:
                manifest.pop(path, None)
            else:
                manifest[path] = entry
        return manifest

    def remove(self, paths: Iterable[str]) -> None:
        with self._writing("cannot remove notes from stage") as conn:
            for path in paths:
                row = conn.execute("SELECT memory_id FROM notes WHERE path = ?", (path,)).fetchone()
                if row is not None:
                    self._delete_note(conn, row[0])
                conn.execute("DELETE FROM manifest WHERE path = ?", (path,))
                if path in self._base or path in self._edits:
                    self._edits[path] = None

    def add(self, document: NoteDocument, entry: ManifestEntry,
            vectors: Sequence[Sequence[float]] | None) -> None:
        note, chunks = document.note, document.chunks
        strays = [c.chunk_id for c in chunks if c.memory_id != note.memory_id or c.path != note.path]
        if strays:
            raise StoreError(f"chunks {strays[:3]} do not belong to note {note.memory_id}")
        blobs = _blobs(vectors, len(chunks))
        with self._writing(f"cannot stage note {note.path}") as conn:
            added, removed, vectors = set(self.added), set(self.removed), dict(self.vectors)
            conn.execute("SAVEPOINT add_note")
            try:
                self._insert(conn, document, entry, blobs)
            except BaseException:
                # Undo this note only, so the caller may retry it (e.g. under a new id).
                conn.execute("ROLLBACK TO add_note")
                self.added, self.removed, self.vectors = added, removed, vectors
                raise
            finally:
                conn.execute("RELEASE add_note")
            self._edits[entry.path] = entry
            self._touched.add(note.memory_id)

    def facts(self) -> StagedFacts:
        with self._writing("cannot inspect stage") as conn:
            paths = frozenset(r[0] for r in conn.execute("SELECT path FROM notes"))
            return StagedFacts(**schema.counts(conn), dimension=schema.vector_dimension(conn),
                               integrity=self._integrity(conn), paths=paths)

    def probe(self, text: str, vector: Sequence[float] | None,
              limit: int) -> tuple[list[str], list[str]]:
        with self._writing("cannot probe stage") as conn:
            words = [c.chunk_id for c, _ in lexical(conn, text, None, limit)]
            if vector is None:
                return words, []
            if self.base_matrix is not None:
                found = chunks_by_rowid(conn, overlay_nearest(
                    conn, self.base_matrix, self.removed, self.added, vector, limit))
            else:
                found = nearest(conn, vector, None, limit, schema.vector_dimension(conn))
            return words, [c.chunk_id for c, _ in found]

    def publish(self, model_id: str | None, dimension: int | None,
                validation: Mapping, chunking: str | None = None) -> GenerationInfo:
        with self._writing(f"cannot seal index generation {self._id}") as conn:
            stored = schema.vector_dimension(conn)
            if dimension is not None and stored is not None and dimension != stored:
                raise StoreError(f"publish says dimension {dimension}, vectors have {stored}")
            meta = {"schema_version": schema.SCHEMA_VERSION, "id": self._id, "seq": self.seq,
                    "model_id": model_id, "chunking": chunking,
                    "dimension": dimension if dimension is not None else stored,
                    **schema.counts(conn), "validation": _plain(validation)}
        return self._publish(self, meta)

    def discard(self) -> None:
        if self.conn is not None:
            self._discard(self)
            self.conn = None

    # -- for the publisher -------------------------------------------------------------

    def log(self, conn: apsw.Connection) -> None:
        """What this generation changed, for readers patching what they keep in memory."""
        conn.executemany("INSERT INTO chunk_log (seq, rowid, added, crc) VALUES (?, ?, ?, ?)",
                         [rows.sealed((self.seq, r, 1)) for r in sorted(self.added)]
                         + [rows.sealed((self.seq, r, 0)) for r in sorted(self.removed)])
        changed = [(path, rows.entry_json(self._base.get(path)), rows.entry_json(entry))
                   for path, entry in self._edits.items() if self._base.get(path) != entry]
        conn.executemany("INSERT INTO manifest_log (seq, path, before, after, crc) "
                         "VALUES (?, ?, ?, ?, ?)",
                         [rows.sealed((self.seq, *change)) for change in changed])

    # -- internals ---------------------------------------------------------------------

    @contextmanager
    def _writing(self, what: str) -> Iterator[apsw.Connection]:
        if self.conn is None:
            raise StoreError(f"stage {self._id} was already published or discarded")
        with store_errors(what):
            yield self.conn

    def _integrity(self, conn: apsw.Connection) -> str:
        """A full build checks every page and the full-text index; an incremental stage
        checks what it wrote reads back whole (the rest was checked when it was written)."""
        if self.full:
            found = [str(r[0]) for r in conn.execute("PRAGMA integrity_check")]
            if found != ["ok"]:
                return "; ".join(found[:5])
            try:
                conn.execute("INSERT INTO chunk_fts(chunk_fts, rank) VALUES ('integrity-check', 0)")
            except apsw.Error as exc:
                return f"full-text index: {exc}"
        try:
            self._reread(conn)
        except rows.IndexDamaged as exc:
            return str(exc)
        return "ok"

    def _reread(self, conn: apsw.Connection) -> None:
        ids = sorted(self._touched)
        for row in conn.execute(f"SELECT {rows.NOTE_COLUMNS} FROM notes n WHERE n.memory_id "
                                f"IN (SELECT value FROM json_each(?))", (_json(ids),)):
            rows.note_from_row(row)
        for row in conn.execute(f"SELECT {rows.CHUNK_COLUMNS} FROM chunks c WHERE c.rowid "
                                f"IN (SELECT value FROM json_each(?))", (_json(self.added),)):
            rows.chunk_from_row(row)
        for rowid, blob, stored in conn.execute(
                "SELECT rowid, embedding, crc FROM chunk_vectors WHERE rowid "
                "IN (SELECT value FROM json_each(?))", (_json(self.added),)):
            rows.vector_from_row(rowid, blob, stored)

    def _insert(self, conn: apsw.Connection, document: NoteDocument, entry: ManifestEntry,
                blobs: list[bytes] | None) -> None:
        note = document.note
        held = conn.execute("SELECT path FROM notes WHERE memory_id = ?", (note.memory_id,)).fetchone()
        if held is not None and held[0] != note.path:
            raise DuplicateNote(f"{note.memory_id} is already used by {held[0]}", holder=held[0])
        old = conn.execute("SELECT memory_id FROM notes WHERE path = ?", (note.path,)).fetchone()
        if old is not None:
            self._delete_note(conn, old[0])
        conn.execute(rows.INSERT_NOTE, rows.note_row(note, document.lines))
        conn.executemany("INSERT INTO note_names (name, memory_id, crc) VALUES (?, ?, ?)",
                         [rows.sealed((name, note.memory_id)) for name in NoteKeys.of(note).names])
        dimension = schema.vector_dimension(conn)
        if blobs and dimension is None:
            dimension = len(blobs[0]) // 4
            schema.write_meta(conn, {"vector_dimension": dimension})
        for i, chunk in enumerate(document.chunks):
            conn.execute(rows.INSERT_CHUNK, rows.chunk_row(chunk))
            rowid = conn.last_insert_rowid()
            self.added.add(rowid)
            conn.execute("INSERT INTO chunk_fts (rowid, indexed) VALUES (?, ?)",
                         (rowid, chunk.indexed_text))
            if blobs:
                if len(blobs[i]) // 4 != dimension:
                    raise StoreError(f"vector of {len(blobs[i]) // 4} dimensions for an index "
                                     f"of {dimension}")
                conn.execute("INSERT INTO chunk_vectors (rowid, embedding, crc) VALUES (?, ?, ?)",
                             rows.vector_row(rowid, blobs[i]))
                self.vectors[rowid] = (blobs[i], note.memory_id)
        conn.execute("INSERT OR REPLACE INTO manifest (path, content_hash, size, mtime_ns, crc) "
                     "VALUES (?, ?, ?, ?, ?)", rows.manifest_row(entry))

    def _delete_note(self, conn: apsw.Connection, memory_id: str) -> None:
        rowids = [r[0] for r in conn.execute("SELECT rowid FROM chunks WHERE memory_id = ?",
                                             (memory_id,))]
        if rowids:
            pairs = [(r,) for r in rowids]
            conn.executemany("DELETE FROM chunk_fts WHERE rowid = ?", pairs)
            conn.executemany("DELETE FROM chunk_vectors WHERE rowid = ?", pairs)
        for rowid in rowids:
            if rowid in self.added:
                self.added.discard(rowid)
                self.vectors.pop(rowid, None)
            else:
                self.removed.add(rowid)
        for table in ("chunks", "note_names", "notes"):
            conn.execute(f"DELETE FROM {table} WHERE memory_id = ?", (memory_id,))
        self._touched.discard(memory_id)


def _blobs(vectors: Sequence[Sequence[float]] | None, count: int) -> list[bytes] | None:
    if vectors is None:
        return None
    if len(vectors) != count:
        raise StoreError(f"{len(vectors)} vectors given for {count} chunks")
    return [as_blob(v) for v in vectors]


def _json(values: Iterable) -> str:
    return json.dumps(sorted(values))


def _plain(validation: Mapping) -> dict:
    return json.loads(json.dumps(dict(validation or {}), default=str))
