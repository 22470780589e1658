"""PostgresIndexStage: a new generation built inside one transaction of its own connection.

Nothing of a stage is visible before its COMMIT, which also switches the pointer row: a
discarded stage (or one whose process is killed) is rolled back by Postgres, whole.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence

import psycopg
from psycopg.types.json import Jsonb

from memory.adapters.postgres import schema
from memory.adapters.postgres.database import translated
from memory.adapters.postgres.rows import chunk_json, indexed_terms, note_values, tsvector_literal
from memory.adapters.postgres.search import lexical, nearest, vector_literal
from memory.adapters.postgres.seals import (CHUNK_COLUMNS, CHUNK_TYPES, MANIFEST_COLUMNS,
                                            MANIFEST_TYPES, NOTE_COLUMNS, NOTE_TYPES,
                                            sealed_insert)
from memory.domain.notes import NoteDocument
from memory.domain.refresh import GenerationInfo, ManifestEntry
from memory.domain.scope import ScopeFilter, StatusFilter
from memory.ports.errors import DuplicateNote, StoreError
from memory.ports.index_generations import IndexStage, StagedFacts, check_addable

ANY = ScopeFilter(status=StatusFilter.ANY)
_INSERT_NOTE = sealed_insert("aim_notes", NOTE_COLUMNS, NOTE_TYPES, "RETURNING row")
_INSERT_CHUNK = sealed_insert("aim_chunks", CHUNK_COLUMNS, CHUNK_TYPES)
# The manifest's seal leaves out the generation: rows copied to the next one keep it.
_INSERT_MANIFEST = sealed_insert("aim_manifest", ("gen", *MANIFEST_COLUMNS),
                                 ("text", *MANIFEST_TYPES), sealed=MANIFEST_COLUMNS)


class PostgresIndexStage(IndexStage):
    def __init__(self, conn: psycopg.Connection, generation: str, created: str,
                 on_publish=None):
        self._conn = conn
        self._id = generation
        self._created = created
        self._dimension: int | None = None
        self._done = False
        self._on_publish = on_publish or (lambda info: None)

    @property
    def id(self) -> str:
        return self._id

    @translated
    def manifest(self) -> Mapping[str, ManifestEntry]:
        rows = self._open().execute(
            "SELECT path, content_hash, size, mtime_ns FROM aim_manifest WHERE gen = %s",
            (self._id,)).fetchall()
        return {path: ManifestEntry(path=path, content_hash=h, size=size, mtime_ns=mtime)
                for path, h, size, mtime in rows}

    @translated
    def remove(self, paths: Iterable[str]) -> None:
        paths = list(paths)
        conn = self._open()
        conn.execute("DELETE FROM aim_members WHERE gen = %s AND path = ANY(%s)", (self._id, paths))
        conn.execute("DELETE FROM aim_manifest WHERE gen = %s AND path = ANY(%s)", (self._id, paths))

    @translated
    def add(self, document: NoteDocument, entry: ManifestEntry,
            vectors: Sequence[Sequence[float]] | None) -> None:
        check_addable(document, vectors)
        note = document.note
        literals = [vector_literal(v, self._dimension) for v in vectors] if vectors else None
        conn = self._open()
        holder = conn.execute("SELECT path FROM aim_members WHERE gen = %s AND memory_id = %s",
                              (self._id, note.memory_id)).fetchone()
        if holder is not None and holder[0] != note.path:
            raise DuplicateNote(f"{note.memory_id} already used by {holder[0]}", holder=holder[0])
        self.remove([note.path])  # adding a path again replaces what it held
        row = conn.execute(_INSERT_NOTE, note_values(note, document.lines)).fetchone()[0]
        if literals:
            self._dimension = len(vectors[0])
        with conn.cursor() as cur:
            cur.executemany(
                _INSERT_CHUNK,
                [(row, chunk.ordinal, chunk_json(chunk), tsvector_literal(terms),
                  sum(terms.values()), self._dimension if literals else None,
                  literals[i] if literals else None)
                 for i, chunk in enumerate(document.chunks)
                 for terms in [indexed_terms(chunk.indexed_text)]])
        conn.execute("INSERT INTO aim_members (gen, note_row, memory_id, path) "
                     "VALUES (%s, %s, %s, %s)", (self._id, row, note.memory_id, note.path))
        conn.execute(_INSERT_MANIFEST, (self._id, entry.path, entry.content_hash, entry.size,
                                        entry.mtime_ns))

    @translated
    def facts(self) -> StagedFacts:
        conn = self._open()
        notes, chunks, vectors, dimension = conn.execute(
            "SELECT count(DISTINCT mem.note_row), count(c.row), count(c.embedding), max(c.dim) "
            "FROM aim_members mem LEFT JOIN aim_chunks c ON c.note_row = mem.note_row "
            "WHERE mem.gen = %s", (self._id,)).fetchone()
        paths = [r[0] for r in conn.execute("SELECT path FROM aim_members WHERE gen = %s",
                                            (self._id,))]
        return StagedFacts(notes=notes, chunks=chunks, vectors=vectors, dimension=dimension,
                           integrity="ok", paths=frozenset(paths))

    @translated
    def probe(self, text: str, vector: Sequence[float] | None,
              limit: int) -> tuple[list[str], list[str]]:
        conn = self._open()
        found = [h.chunk.chunk_id for h in lexical(conn, self._id, text, ANY, limit)]
        dimension = self._dimension or self.facts().dimension
        near = [h.chunk.chunk_id for h in nearest(conn, self._id, vector, ANY, limit, dimension)] \
            if vector is not None and dimension else []
        return found, near

    @translated
    def publish(self, model_id: str | None, dimension: int | None, validation: Mapping,
                chunking: str | None = None) -> GenerationInfo:
        conn = self._open()
        facts = self.facts()
        conn.execute("SELECT generation FROM aim_pointer FOR UPDATE")  # one publish at a time
        conn.execute("UPDATE aim_generations SET state = 'published', model_id = %s, "
                     "dimension = %s, chunking = %s, validation = %s, notes = %s, chunks = %s, "
                     "vectors = %s, published_at = now() WHERE id = %s",
                     (model_id, dimension, chunking, Jsonb(dict(validation), dumps=_dumps),
                      facts.notes, facts.chunks, facts.vectors, self._id))
        # Every other published one, not only the pointer's: a pointer damaged to name a
        # missing generation must not leave the one it named published (never collected).
        conn.execute("UPDATE aim_generations SET state = 'superseded', superseded_at = now() "
                     "WHERE state = 'published' AND id <> %s", (self._id,))
        conn.execute("INSERT INTO aim_pointer (one, generation) VALUES (true, %s) "
                     "ON CONFLICT (one) DO UPDATE SET generation = EXCLUDED.generation",
                     (self._id,))
        if dimension:
            schema.hnsw_index(conn, dimension)
        manifest = self.manifest()
        self._finish(commit=True)
        info = GenerationInfo(id=self._id, created=self._created, notes=facts.notes,
                              chunks=facts.chunks, vectors=facts.vectors, model_id=model_id,
                              dimension=dimension, schema_version=schema.SCHEMA_VERSION,
                              chunking=chunking, manifest=manifest)
        self._on_publish(info)
        return info

    @translated
    def discard(self) -> None:
        if not self._done:
            self._finish(commit=False)

    def _open(self) -> psycopg.Connection:
        if self._done:
            raise StoreError(f"stage {self._id} was already published or discarded")
        return self._conn

    def _finish(self, *, commit: bool) -> None:
        self._done = True
        try:
            (self._conn.commit if commit else self._conn.rollback)()
        finally:
            self._conn.close()


def _dumps(value) -> str:
    return json.dumps(value, default=str)
