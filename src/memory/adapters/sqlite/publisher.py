"""Opening, publishing and throwing away stages, and making the last-good copy.

Incremental: COMMIT of the stage's transaction on the live database is the publish; a
checkpoint follows and CURRENT records the file's size and mtime after it. Full: the new
file is validated, copied as the last-good copy, switched to WAL, renamed into index/ and
named by CURRENT, all before the refresh returns.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import apsw

from memory.adapters.sqlite import rows, schema
from memory.adapters.sqlite.connection import (make_wal, open_building, open_reader,
                                               open_writer, store_errors)
from memory.adapters.sqlite.database import info_from_meta
from memory.adapters.sqlite.index import SqliteIndex
from memory.adapters.sqlite.layout import (LastGood, Pointer, fsync_dir,
                                           fsync_file, new_generation_id, now_iso, replace,
                                           sha256_of)
from memory.adapters.sqlite.stage import SqliteIndexStage
from memory.domain.refresh import GenerationInfo
from memory.ports.errors import StoreError


class Publisher:
    """The write side of the index folder (one refresh at a time: the refresh lock)."""

    def __init__(self, index: SqliteIndex):
        self._index = index
        self._layout = index.layout

    # -- stages ------------------------------------------------------------------------

    def incremental(self, base: str) -> SqliteIndexStage:
        live = self._index.live()
        if live is None:
            raise StoreError(f"base index generation {base} is not the live index: "
                             f"run a full refresh")
        _, database = live
        conn = open_writer(database.path)
        try:
            with store_errors(f"cannot write the index in {self._layout.dir}"):
                conn.execute("BEGIN IMMEDIATE")  # the write lock, up front
                meta = schema.read_meta(conn)
                if meta.get("schema_version") != schema.SCHEMA_VERSION or meta.get("id") != base:
                    raise StoreError(f"base index generation {base} is not the live one "
                                     f"({meta.get('id')}, schema {meta.get('schema_version')})")
                seq = int(meta["seq"])
            manifest = database.manifest(seq)
        except rows.IndexDamaged as exc:
            _close(conn)
            self._index.retire(database, f"failed when a refresh opened it: {exc}")
            raise
        except BaseException:
            _close(conn)
            raise
        return SqliteIndexStage(new_generation_id(), conn, seq + 1, manifest,
                                self._publish_incremental, self._rollback, full=False,
                                matrices=database.vectors)

    def full(self) -> SqliteIndexStage:
        gen_id = new_generation_id()
        path = self._layout.staging_path(gen_id)
        with store_errors(f"cannot create a new index in {self._layout.staging}"):
            path.parent.mkdir(parents=True, exist_ok=True)
        conn = open_building(path)
        try:
            with store_errors(f"cannot prepare the new index {path}"):
                schema.create(conn)
                conn.execute("BEGIN")
        except BaseException:
            conn.close()
            path.unlink(missing_ok=True)
            raise
        return SqliteIndexStage(gen_id, conn, 1, {}, self._publish_full, self._throw_away,
                                full=True)

    # -- publishing --------------------------------------------------------------------

    def _seal(self, stage: SqliteIndexStage, meta: dict) -> dict:
        conn = stage.conn
        meta = {**meta, "created": now_iso()}
        schema.write_meta(conn, meta)
        conn.execute("INSERT INTO generations (seq, id, created, crc) VALUES (?, ?, ?, ?)",
                     rows.sealed((stage.seq, stage.id, meta["created"])))
        return meta

    def _publish_incremental(self, stage: SqliteIndexStage, meta: dict) -> GenerationInfo:
        conn = stage.conn
        with store_errors(f"cannot publish index generation {stage.id} in {self._layout.dir}"):
            meta = self._seal(stage, meta)
            stage.log(conn)
            oldest = stage.seq - schema.LOG_GENERATIONS
            for table in ("chunk_log", "manifest_log", "generations"):
                conn.execute(f"DELETE FROM {table} WHERE seq <= ?", (oldest,))
            conn.execute("COMMIT")
            path = Path(conn.db_filename("main"))
            # Readers compare the file with CURRENT: while the checkpoint rewrites it,
            # CURRENT records no size, and afterwards the size and mtime it left.
            self._record(path, checkpointing=True)
            _checkpoint(conn)
            _close(conn)
            stage.conn = None
            self._record(path)
        if stage.base_matrix is not None and len(stage.vectors) == len(stage.added):
            stage.matrices.advance(stage.base_matrix, stage.seq, stage.removed, [
                (rowid, *stage.vectors[rowid]) for rowid in sorted(stage.added)])
        self._index.invalidate()
        self._ensure_copy()
        return info_from_meta(meta, stage.manifest())

    def _publish_full(self, stage: SqliteIndexStage, meta: dict) -> GenerationInfo:
        built = self._layout.staging_path(stage.id)
        manifest = stage.manifest()
        with store_errors(f"cannot publish the new index {built}"):
            meta = self._seal(stage, meta)
            # Merge the full-text segments once: every later read gains.
            stage.conn.execute("INSERT INTO chunk_fts(chunk_fts) VALUES ('optimize')")
            stage.conn.execute("COMMIT")
            stage.conn.close()
            stage.conn = None
            copy = self._layout.staging_path(f"last-good-{stage.id}")
            size, digest = _copy(built, copy)
            make_wal(built)
            fsync_file(built)
            final = self._layout.database_path(stage.id)
            replace(built, final)
            fsync_dir(self._layout.dir)
            self._record(final, created=meta["created"])
            kept = self._layout.last_good_path(stage.id)
            replace(copy, kept)
            fsync_dir(self._layout.dir)
            self._layout.write_last_good(LastGood(
                file=kept.name, generation=stage.id, database=stage.id,
                created=meta["created"], size=size, sha256=digest))
            self._layout.clear_damage()
        self._index.invalidate()
        return info_from_meta(meta, manifest)

    def _record(self, path: Path, created: str | None = None,
                checkpointing: bool = False) -> None:
        """CURRENT names the live file and its size and mtime as this refresher left it."""
        st = os.stat(path)
        pointer = self._layout.read_pointer() if created is None else None
        self._layout.write_pointer(Pointer(
            database=path.name[len("index-"):-len(".sqlite")],
            created=created or (pointer.created if pointer else now_iso()),
            size=None if checkpointing else st.st_size,
            mtime_ns=None if checkpointing else st.st_mtime_ns), durable=not checkpointing)

    def _ensure_copy(self) -> None:
        """A last-good copy exists after every publish: made from the live database when
        the full build's copy is missing (deleted, or found damaged)."""
        try:
            record = self._layout.read_last_good()
        except StoreError:
            record = None
        if record is not None and (self._layout.dir / record.file).is_file():
            return
        live = self._index.live()
        if live is None:
            return
        database = live[1]
        with store_errors(f"cannot copy the index in {self._layout.dir}"):
            source = open_reader(database.path)
            try:
                check = source.execute("PRAGMA quick_check").fetchall()
                if [r[0] for r in check] != ["ok"]:
                    return  # nothing good to copy; the next full build makes one
                gen_id = schema.meta_value(source, "id")
                created = schema.meta_value(source, "created")
                copy = self._layout.staging_path(f"last-good-{gen_id}")
                target = apsw.Connection(str(copy))
                try:
                    with target.backup("main", source, "main") as backup:
                        backup.step()
                finally:
                    target.close()
            finally:
                source.close()
            kept = self._layout.last_good_path(gen_id)
            size, digest = os.path.getsize(copy), sha256_of(copy)
            replace(copy, kept)
            self._layout.write_last_good(LastGood(file=kept.name, generation=gen_id,
                                                  database=database.path.name,
                                                  created=created or now_iso(), size=size,
                                                  sha256=digest))

    # -- throwing away -----------------------------------------------------------------

    @staticmethod
    def _rollback(stage: SqliteIndexStage) -> None:
        _close(stage.conn)

    def _throw_away(self, stage: SqliteIndexStage) -> None:
        _close(stage.conn)
        with store_errors(f"cannot discard stage {stage.id}"):
            self._layout.staging_path(stage.id).unlink(missing_ok=True)


def _checkpoint(conn: apsw.Connection) -> None:
    """Copy the commit into the database file without waiting for anyone: frames a reader
    still needs stay in the WAL for the next refresh. When every frame is copied and no
    reader is in the WAL, the WAL is cut to nothing."""
    frames, copied = conn.wal_checkpoint(mode=apsw.SQLITE_CHECKPOINT_PASSIVE)
    if frames != copied:
        return
    conn.set_busy_timeout(0)
    try:
        conn.wal_checkpoint(mode=apsw.SQLITE_CHECKPOINT_TRUNCATE)
    except apsw.BusyError:
        pass  # a reader is still in the WAL; the next commit starts it from the top


def _close(conn: apsw.Connection | None) -> None:
    if conn is None:
        return
    try:
        if not conn.get_autocommit():
            conn.execute("ROLLBACK")
    except apsw.Error:
        pass  # closing discards an open transaction anyway
    conn.close()


def _copy(source: Path, target: Path) -> tuple[int, str]:
    """Copy a closed file, hashing it on the way; the copy is on disk when this returns."""
    digest, size = hashlib.sha256(), 0
    with open(source, "rb") as src, open(target, "wb") as dst:
        for block in iter(lambda: src.read(1 << 20), b""):
            digest.update(block)
            dst.write(block)
            size += len(block)
        dst.flush()
        os.fsync(dst.fileno())
    return size, digest.hexdigest()

