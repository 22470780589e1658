"""One index database file as this process reads it: a small pool of read connections,
one read transaction per operation, and what is kept per generation (infos, caches,
manifests, the vector matrix)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import apsw

from memory.adapters.sqlite.connection import open_immutable, open_reader
from memory.adapters.sqlite.rows import (MANIFEST_COLUMNS, IndexDamaged, entry_from_json,
                                         manifest_from_row, opened)
from memory.adapters.sqlite.schema import SCHEMA_VERSION, meta_value, read_meta
from memory.adapters.sqlite.vector_matrix import MatrixStore
from memory.adapters.sqlite.view import GenerationCache, GenerationView, LruCache
from memory.domain.refresh import GenerationInfo, ManifestEntry
from memory.ports.errors import StoreError

_IDLE = 4  # read connections kept open between operations


class DatabaseClosed(StoreError):
    """Another thread moved on from this file (CURRENT names another): look again."""


class LazyManifest(Mapping[str, ManifestEntry]):
    """Read on first use: most callers of current() need only the id."""

    def __init__(self, load: Callable[[], Mapping[str, ManifestEntry]]):
        self._load = load
        self._data: Mapping[str, ManifestEntry] | None = None

    def _entries(self) -> Mapping[str, ManifestEntry]:
        if self._data is None:
            self._data = self._load()
        return self._data

    def __getitem__(self, key: str) -> ManifestEntry:
        return self._entries()[key]

    def __iter__(self):
        return iter(self._entries())

    def __len__(self) -> int:
        return len(self._entries())


def info_from_meta(meta: Mapping, manifest: Mapping[str, ManifestEntry]) -> GenerationInfo:
    return GenerationInfo(
        id=meta["id"], created=meta.get("created", ""), notes=meta.get("notes", 0),
        chunks=meta.get("chunks", 0), vectors=meta.get("vectors", 0),
        model_id=meta.get("model_id"), dimension=meta.get("dimension"),
        schema_version=meta.get("schema_version", 0), chunking=meta.get("chunking"),
        manifest=manifest)


class Database:
    """Snapshots of one database file; `immutable` for the last-good copy."""

    def __init__(self, path: Path, *, immutable: bool = False,
                 on_damage: Callable[[str], None] = lambda why: None):
        self.path = path
        self.immutable = immutable
        self._lock = threading.Lock()
        self._idle: list[apsw.Connection] = []
        self._closed = False
        self._caches: LruCache[str, GenerationCache] = LruCache(3)
        self._infos: LruCache[str, tuple[GenerationInfo, int]] = LruCache(8)
        self._manifest: tuple[int, dict[str, ManifestEntry]] | None = None
        self._manifest_lock = threading.Lock()
        self._watch: apsw.Connection | None = None  # asked only for PRAGMA data_version
        self._latest: tuple[int, GenerationInfo] | None = None
        self._watch_lock = threading.Lock()
        self.vectors = MatrixStore(self.snapshot, on_damage)

    @contextmanager
    def snapshot(self) -> Iterator[GenerationView]:
        """A read transaction held for the block: every read in it sees one generation."""
        conn = self._acquire()
        healthy = False
        try:
            conn.execute("BEGIN")
            try:
                yield self._view(conn)
            finally:
                conn.execute("COMMIT")
            healthy = True
        finally:
            self._release(conn, healthy)

    def latest(self) -> GenerationInfo:
        """The generation a new snapshot would see. data_version changes with every commit
        another connection makes, so a use case asking a few times per search costs one
        cheap query each, not a read transaction."""
        with self._watch_lock:
            if self._watch is None:
                self._watch = self._open()
            version = self._watch.execute("PRAGMA data_version").fetchone()[0]
            if self._latest is not None and self._latest[0] == version:
                return self._latest[1]
        with self.snapshot() as view:
            info = view.info
        with self._watch_lock:
            self._latest = (version, info)
        return info

    def manifest(self, seq: int) -> dict[str, ManifestEntry]:
        """The manifest of generation `seq`, moved from the one kept by the change log."""
        with self.snapshot() as view, self._manifest_lock:
            kept = self._manifest
            if kept is not None and kept[0] == seq:
                return kept[1]
            moved = _moved(view.conn, kept[1], kept[0], seq) if kept is not None else None
            if moved is None:
                current = {e.path: e for e in map(manifest_from_row, view.conn.execute(
                    f"SELECT {MANIFEST_COLUMNS} FROM manifest"))}
                moved = _moved(view.conn, current, view.seq, seq)
            if moved is None:
                raise StoreError(f"the manifest of generation {seq} is no longer in the log")
            self._manifest = (seq, moved)
            return moved

    def quick_check(self) -> str:
        """SQLite's structural check of every page ("ok" or its first complaints)."""
        conn = self._open()
        try:
            rows = conn.execute("PRAGMA quick_check").fetchall()
        except (apsw.Error, UnicodeDecodeError) as exc:
            return str(exc)
        finally:
            conn.close()
        return "; ".join(str(r[0]) for r in rows[:5])

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        with self._watch_lock:
            if self._watch is not None:
                idle.append(self._watch)
                self._watch = None
        for conn in idle:
            conn.close()

    # -- internals ---------------------------------------------------------------------

    def _open(self) -> apsw.Connection:
        if self.immutable:
            return open_immutable(self.path)
        conn = open_reader(self.path)
        try:
            conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()  # opens the WAL
        except (apsw.ReadOnlyError, apsw.CantOpenError) as exc:
            conn.close()
            # A read-only folder where no reader made the -shm file yet. Without a -wal file
            # every page is in the database file, and no refresh can start one there.
            if not Path(f"{self.path}-wal").exists():
                return open_immutable(self.path)
            raise StoreError(f"cannot read the index {self.path}: its folder is read-only "
                             f"and SQLite cannot share its log there ({exc})") from exc
        return conn

    def _acquire(self) -> apsw.Connection:
        with self._lock:
            if self._closed:
                raise DatabaseClosed(f"the index {self.path.name} was closed")
            if self._idle:
                return self._idle.pop()
        return self._open()

    def _release(self, conn: apsw.Connection, healthy: bool) -> None:
        with self._lock:
            if healthy and not self._closed and len(self._idle) < _IDLE:
                self._idle.append(conn)
                return
        conn.close()

    def _view(self, conn: apsw.Connection) -> GenerationView:
        gen_id = meta_value(conn, "id")
        if gen_id is None:
            raise IndexDamaged(f"index file {self.path.name} is damaged: it names no generation")
        kept = self._infos.get(gen_id)
        if kept is None:
            meta = read_meta(conn)
            if meta.get("schema_version") != SCHEMA_VERSION:
                raise StoreError(f"the index {self.path.name} has schema "
                                 f"{meta.get('schema_version')!r}, this version reads "
                                 f"{SCHEMA_VERSION}: run a full refresh")
            seq = int(meta["seq"])
            info = info_from_meta(meta, LazyManifest(lambda: self.manifest(seq)))
            kept = self._infos.put(gen_id, (info, seq))
        info, seq = kept
        cache = self._caches.get(gen_id) or self._caches.put(gen_id, GenerationCache())
        return GenerationView(conn, info, seq, cache, self.vectors)


def _moved(conn: apsw.Connection, manifest: dict[str, ManifestEntry], at: int,
           seq: int) -> dict[str, ManifestEntry] | None:
    """`manifest` of generation `at` moved to generation `seq` by the log of conn's snapshot;
    None when the log no longer covers the way."""
    if at == seq:
        return manifest
    low, high = min(at, seq), max(at, seq)
    oldest = conn.execute("SELECT min(seq) FROM generations").fetchone()[0]
    if oldest is None or oldest > low + 1:
        return None
    order = "ASC" if seq > at else "DESC"
    moved = dict(manifest)
    for row in conn.execute(f"SELECT seq, path, before, after, crc FROM manifest_log "
                            f"WHERE seq > ? AND seq <= ? ORDER BY seq {order}", (low, high)):
        _, path, before, after = opened(row, "manifest log")
        entry = entry_from_json(path, after if seq > at else before)
        if entry is None:
            moved.pop(path, None)
        else:
            moved[path] = entry
    return moved
