"""What the reliability tests read of an index, one class per store, read only.

Both answer the same questions: is what the pointer names one complete, validated
generation; which generation serves; which generations are still held and what their
manifests say; what a crashed refresh left behind; is the refresh lock free.
"""

from __future__ import annotations

import json
from pathlib import Path

import psycopg


def json_or_none(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None


class SqliteIndexState:
    """The index in `.ai-memory/index`: CURRENT, the live database and its change log."""

    def __init__(self, state: Path):
        self.folder = Path(state) / "index"

    def pointer(self) -> dict | None:
        return json_or_none(self.folder / "CURRENT")

    def database(self) -> Path | None:
        pointer = self.pointer()
        return self.folder / pointer["file"] if pointer else None

    def problems(self) -> list[str]:
        from memory.adapters.sqlite.connection import open_reader
        from memory.adapters.sqlite.schema import read_meta
        path = self.database()
        if path is None or not path.is_file():
            return [f"index/CURRENT names {path and path.name!r}, not an existing database"]
        conn = open_reader(path)
        try:
            conn.execute("BEGIN")
            integrity = [r[0] for r in conn.execute("PRAGMA integrity_check")]
            meta = read_meta(conn)
            notes, manifest = (conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                               for t in ("notes", "manifest"))
            conn.execute("COMMIT")
        finally:
            conn.close()
        problems = [] if integrity == ["ok"] else [f"integrity: {integrity[:3]}"]
        if not meta.get("validation", {}).get("ok"):
            problems.append(f"meta of {path.name} is not a validated generation: {meta}")
        if not notes == manifest == meta.get("notes"):
            problems.append(f"{notes} notes, {manifest} manifest entries, meta says {meta}")
        return problems

    def generation_id(self) -> str | None:
        from memory.adapters.sqlite import SqliteGenerations, SqliteIndex
        index = SqliteIndex(self.folder.parent)
        try:
            info = SqliteGenerations(index).current()
        finally:
            index.close()
        return info.id if info else None

    def generations(self) -> list[str]:
        from memory.adapters.sqlite.connection import open_reader
        path = self.database()
        if path is None or not path.is_file():
            return []
        conn = open_reader(path)
        try:
            return [r[0] for r in conn.execute("SELECT id FROM generations ORDER BY seq")]
        finally:
            conn.close()

    def manifest_of(self, generation: str) -> dict[str, str] | None:
        from memory.adapters.sqlite import SqliteGenerations, SqliteIndex
        index = SqliteIndex(self.folder.parent)
        try:
            entries = SqliteGenerations(index).manifest_of(generation)
        finally:
            index.close()
        return None if entries is None else {p: e.content_hash for p, e in entries.items()}

    def leftovers(self) -> list[Path]:
        """Staging files, temp files and a full build renamed in but never named."""
        found = sorted((self.folder / "staging").iterdir()) \
            if (self.folder / "staging").is_dir() else []
        if self.folder.is_dir():
            found += sorted(self.folder.glob(".CURRENT.*"))
            found += sorted(p for p in self.folder.glob(".*.tmp")
                            if not p.name.startswith(".CURRENT."))
            live = self.database()
            found += sorted(p for p in self.folder.glob("index-*.sqlite")
                            if live is not None and p.name > live.name)
        return found

    def lock_is_free(self) -> bool:
        from memory.adapters.statefiles import FileRefreshLock
        with FileRefreshLock(self.folder.parent).hold(0.0):
            return True


class PostgresIndexState:
    """The index in a Postgres database: the pointer row, generations, members, manifest."""

    def __init__(self, url: str):
        self.url = url

    def _rows(self, sql: str, params: tuple = ()) -> list[tuple]:
        with psycopg.connect(self.url, autocommit=True) as conn:
            return conn.execute(sql, params).fetchall()

    def problems(self) -> list[str]:
        rows = self._rows(
            "SELECT g.id, g.state, g.notes, g.chunks, g.validation->>'ok', "
            "(SELECT count(*) FROM aim_members m WHERE m.gen = g.id), "
            "(SELECT count(*) FROM aim_manifest f WHERE f.gen = g.id), "
            "(SELECT count(c.row) FROM aim_members m JOIN aim_chunks c ON c.note_row = m.note_row "
            " WHERE m.gen = g.id) "
            "FROM aim_pointer p LEFT JOIN aim_generations g ON g.id = p.generation")
        if not rows or rows[0][0] is None:
            return [f"the pointer names no generation the database holds: {rows}"]
        gen, state, notes, chunks, ok, members, manifest, held = rows[0]
        problems = [] if state == "published" else [f"{gen} is {state}, not published"]
        if ok != "true":
            problems.append(f"{gen} was not validated: {ok}")
        if not notes == members == manifest or chunks != held:
            problems.append(f"{gen}: {members} members, {manifest} manifest entries, {held} "
                            f"chunks; its record says {notes} notes, {chunks} chunks")
        return problems

    def generation_id(self) -> str | None:
        rows = self._rows("SELECT generation FROM aim_pointer")
        return rows[0][0] if rows else None

    def generations(self) -> list[str]:
        return [r[0] for r in self._rows("SELECT id FROM aim_generations WHERE state <> 'staged' "
                                         "ORDER BY seq")]

    def manifest_of(self, generation: str) -> dict[str, str] | None:
        if generation not in self.generations():
            return None
        return dict(self._rows("SELECT path, content_hash FROM aim_manifest WHERE gen = %s",
                               (generation,)))

    def leftovers(self) -> list[str]:
        """Staged generations and note rows no generation holds (a dead refresh's
        transaction is rolled back whole, so both should stay empty)."""
        staged = [f"staged generation {r[0]}" for r in self._rows(
            "SELECT id FROM aim_generations WHERE state = 'staged'")]
        orphans = self._rows("SELECT count(*) FROM aim_notes n WHERE NOT EXISTS "
                             "(SELECT 1 FROM aim_members m WHERE m.note_row = n.row)")[0][0]
        return staged + ([f"{orphans} note rows no generation holds"] if orphans else [])

    def lock_is_free(self, wait_s: float = 30.0) -> bool:
        """The advisory lock of a killed holder goes with its connection once its backend
        notices (at once when idle, after the statement it was running otherwise)."""
        from memory.adapters.postgres import PostgresDatabase, PostgresRefreshLock
        database = PostgresDatabase(self.url, pool_max=1)
        try:
            with PostgresRefreshLock(database).hold(wait_s):
                return True
        finally:
            database.close()
