"""One open, immutable index generation with its per-generation caches of notes."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path

import apsw

from memory.adapters.sqlite.connection import open_published, store_errors
from memory.adapters.sqlite.schema import (NOTE_COLUMNS, SCHEMA_VERSION, manifest_of,
                                           note_from_row, read_meta)
from memory.domain.notes import Note
from memory.domain.refresh import GenerationInfo, ManifestEntry
from memory.ports.errors import StoreError


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
        schema_version=meta.get("schema_version", 0), manifest=manifest)


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

    def close(self) -> None:
        self.conn.close()

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

    def all_notes(self) -> list[Note]:
        if self._all is None:
            rows = self.conn.execute(f"SELECT {NOTE_COLUMNS} FROM notes n ORDER BY n.path")
            self._all = [self._notes.setdefault(row[0], note_from_row(row)) for row in rows]
        return self._all
