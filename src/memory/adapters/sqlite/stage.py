"""SqliteIndexStage: a private copy of a generation, edited in one transaction, then published."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import apsw

from memory.adapters.sqlite import schema
from memory.adapters.sqlite.connection import store_errors
from memory.adapters.sqlite.layout import IndexLayout, Pointer, fsync_dir, fsync_file, now_iso
from memory.adapters.sqlite.queries import as_blob, lexical, nearest, vector_dimension
from memory.adapters.sqlite.view import LazyManifest, info_from_meta, load_manifest
from memory.domain.notes import NoteDocument
from memory.domain.refresh import GenerationInfo, ManifestEntry
from memory.ports.errors import DuplicateNote, StoreError
from memory.ports.index_generations import IndexStage, StagedFacts


class SqliteIndexStage(IndexStage):
    """Built by SqliteGenerations.stage(); the open transaction is committed by publish()."""

    def __init__(self, layout: IndexLayout, gen_id: str, path: Path, conn: apsw.Connection,
                 on_publish: Callable[[], None]):
        self._layout = layout
        self._id = gen_id
        self._path = path
        self._conn: apsw.Connection | None = conn
        self._on_publish = on_publish

    @property
    def id(self) -> str:
        return self._id

    def manifest(self) -> Mapping[str, ManifestEntry]:
        with self._writing("cannot read staged manifest") as conn:
            return schema.manifest_of(conn)

    def remove(self, paths: Iterable[str]) -> None:
        with self._writing("cannot remove notes from stage") as conn:
            for path in paths:
                row = conn.execute("SELECT memory_id FROM notes WHERE path = ?", (path,)).fetchone()
                if row is not None:
                    self._delete_note(conn, row[0])
                conn.execute("DELETE FROM manifest WHERE path = ?", (path,))

    def add(self, document: NoteDocument, entry: ManifestEntry,
            vectors: Sequence[Sequence[float]] | None) -> None:
        note, chunks = document.note, document.chunks
        strays = [c.chunk_id for c in chunks if c.memory_id != note.memory_id or c.path != note.path]
        if strays:
            raise StoreError(f"chunks {strays[:3]} do not belong to note {note.memory_id}")
        blobs = self._blobs(vectors, len(chunks))
        with self._writing(f"cannot stage note {note.path}") as conn:
            conn.execute("SAVEPOINT add_note")
            try:
                self._insert(conn, document, entry, blobs)
            except BaseException:
                # Undo this note only, so the caller may retry it (e.g. under a new id).
                conn.execute("ROLLBACK TO add_note")
                raise
            finally:
                conn.execute("RELEASE add_note")

    def facts(self) -> StagedFacts:
        with self._writing("cannot inspect stage") as conn:
            return StagedFacts(**_counts(conn), dimension=vector_dimension(conn),
                               integrity=_integrity(conn),
                               paths=frozenset(r[0] for r in conn.execute("SELECT path FROM notes")))

    def probe(self, text: str, vector: Sequence[float] | None,
              limit: int) -> tuple[list[str], list[str]]:
        with self._writing("cannot probe stage") as conn:
            words = [c.chunk_id for c, _ in lexical(conn, text, None, limit)]
            near = [c.chunk_id for c, _ in nearest(conn, vector, None, limit)] if vector is not None else []
            return words, near

    def publish(self, model_id: str | None, dimension: int | None,
                validation: Mapping, chunking: str | None = None) -> GenerationInfo:
        meta = self._seal(model_id, dimension, validation, chunking)
        final = self._layout.generation_path(self._id)
        with store_errors(f"cannot publish index generation {self._id}"):
            fsync_file(self._path)
            os.replace(self._path, final)
            fsync_dir(self._layout.dir)
        with store_errors(f"cannot stat published index generation {self._id}"):
            published = os.stat(final)
        self._layout.write_pointer(Pointer(id=self._id, file=final.name, created=meta["created"],
                                           size=published.st_size,
                                           mtime_ns=published.st_mtime_ns))
        self._on_publish()
        return info_from_meta(meta, LazyManifest(lambda: load_manifest(final)))

    def discard(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        with store_errors(f"cannot discard stage {self._id}"):
            self._path.unlink(missing_ok=True)

    # -- internals ---------------------------------------------------------------------

    @contextmanager
    def _writing(self, what: str) -> Iterator[apsw.Connection]:
        if self._conn is None:
            raise StoreError(f"stage {self._id} was already published or discarded")
        with store_errors(what):
            yield self._conn

    def _seal(self, model_id: str | None, dimension: int | None, validation: Mapping,
              chunking: str | None) -> dict:
        with self._writing(f"cannot seal index generation {self._id}") as conn:
            stored = vector_dimension(conn)
            if dimension is not None and stored is not None and dimension != stored:
                raise StoreError(f"publish says dimension {dimension}, vectors have {stored}")
            meta = {"schema_version": schema.SCHEMA_VERSION, "id": self._id,
                    "created": now_iso(), "model_id": model_id, "chunking": chunking,
                    "dimension": dimension if dimension is not None else stored,
                    **_counts(conn),
                    "validation": json.loads(json.dumps(dict(validation or {}), default=str))}
            schema.write_meta(conn, meta)
            # Merge FTS segments once, now, so every reader of this immutable file gains.
            conn.execute("INSERT INTO chunk_fts(chunk_fts) VALUES ('optimize')")
            conn.execute("COMMIT")
            conn.close()
            self._conn = None
        return meta

    @staticmethod
    def _blobs(vectors: Sequence[Sequence[float]] | None, count: int) -> list[bytes] | None:
        if vectors is None:
            return None
        if len(vectors) != count:
            raise StoreError(f"{len(vectors)} vectors given for {count} chunks")
        return [as_blob(v) for v in vectors]

    def _insert(self, conn: apsw.Connection, document: NoteDocument, entry: ManifestEntry,
                blobs: list[bytes] | None) -> None:
        note = document.note
        held = conn.execute("SELECT path FROM notes WHERE memory_id = ?", (note.memory_id,)).fetchone()
        if held is not None and held[0] != note.path:
            raise DuplicateNote(f"{note.memory_id} is already used by {held[0]}", holder=held[0])
        old = conn.execute("SELECT memory_id FROM notes WHERE path = ?", (note.path,)).fetchone()
        if old is not None:
            self._delete_note(conn, old[0])
        conn.execute(schema.INSERT_NOTE, schema.note_row(note, document.lines))
        conn.executemany("INSERT INTO note_names (name, memory_id) VALUES (?, ?)",
                         [(name, note.memory_id) for name in schema.note_names(note)])
        if blobs and not schema.has_vectors(conn):
            schema.create_vectors(conn, len(blobs[0]) // 4)
        dimension = vector_dimension(conn)
        for i, chunk in enumerate(document.chunks):
            conn.execute(schema.INSERT_CHUNK, schema.chunk_row(chunk))
            rowid = conn.last_insert_rowid()
            conn.execute("INSERT INTO chunk_fts (rowid, indexed) VALUES (?, ?)",
                         (rowid, chunk.indexed_text))
            if blobs:
                if len(blobs[i]) // 4 != dimension:
                    raise StoreError(f"vector of {len(blobs[i]) // 4} dimensions for an index "
                                     f"of {dimension}")
                conn.execute("INSERT INTO chunk_vec (rowid, embedding) VALUES (?, ?)",
                             (rowid, blobs[i]))
        conn.execute("INSERT OR REPLACE INTO manifest (path, content_hash, size, mtime_ns) "
                     "VALUES (?, ?, ?, ?)", (entry.path, entry.content_hash, entry.size, entry.mtime_ns))

    @staticmethod
    def _delete_note(conn: apsw.Connection, memory_id: str) -> None:
        rowids = [(r[0],) for r in conn.execute("SELECT rowid FROM chunks WHERE memory_id = ?",
                                                (memory_id,))]
        if rowids:
            conn.executemany("DELETE FROM chunk_fts WHERE rowid = ?", rowids)
            if schema.has_vectors(conn):
                conn.executemany("DELETE FROM chunk_vec WHERE rowid = ?", rowids)
        for table in ("chunks", "note_names", "notes"):
            conn.execute(f"DELETE FROM {table} WHERE memory_id = ?", (memory_id,))


def _counts(conn: apsw.Connection) -> dict[str, int]:
    def count(table: str) -> int:
        return conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]

    return {"notes": count("notes"), "chunks": count("chunks"),
            "vectors": count("chunk_vec") if schema.has_vectors(conn) else 0}


def _integrity(conn: apsw.Connection) -> str:
    rows = [str(r[0]) for r in conn.execute("PRAGMA integrity_check")]
    if rows != ["ok"]:
        return "; ".join(rows[:5])
    try:
        conn.execute("INSERT INTO chunk_fts(chunk_fts, rank) VALUES ('integrity-check', 0)")
    except apsw.Error as exc:
        return f"full-text index: {exc}"
    return "ok"

