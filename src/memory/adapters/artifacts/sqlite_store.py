"""SqliteArtifactStore: raw records in <state_dir>/artifacts/artifacts.sqlite, a database of
its own beside the derived index (which a rebuild or a forced refresh replaces) and never
inside it: these records are the truth, not derived from anything ai-memory keeps."""

from __future__ import annotations

import hashlib
import os
import secrets
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import TypeVar

import apsw

from memory.domain.artifacts import (Batch, Change, CheckReport, Conversation, IngestedFile,
                                     Message, Stored, change_of, check_extent, scope_change)
from memory.domain.errors import InvalidRequest
from memory.ports.artifact_store import ArtifactStore
from memory.ports.errors import StoreError

FOLDER, FILE = "artifacts", "artifacts.sqlite"
SCHEMA = 1
BUSY_MS = 10_000
T = TypeVar("T")

_TABLES = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS conversations (source TEXT NOT NULL, conversation TEXT NOT NULL, "
    "repository TEXT, project TEXT, ticket TEXT, PRIMARY KEY (source, conversation))",
    # Every revision of a message is kept; `current` marks the one a reader sees.
    "CREATE TABLE IF NOT EXISTS messages (source TEXT NOT NULL, conversation TEXT NOT NULL, "
    "seq INTEGER NOT NULL, revision INTEGER NOT NULL, session TEXT, time TEXT, speaker TEXT, "
    "role TEXT, text TEXT NOT NULL, digest TEXT NOT NULL, origin TEXT, "
    "current INTEGER NOT NULL, stored_at TEXT NOT NULL, "
    "PRIMARY KEY (source, conversation, seq, revision))",
    "CREATE UNIQUE INDEX IF NOT EXISTS messages_current ON messages (source, conversation, seq) "
    "WHERE current = 1",
    "CREATE TABLE IF NOT EXISTS files (source TEXT NOT NULL, path TEXT NOT NULL, "
    "size INTEGER NOT NULL, lines INTEGER NOT NULL, digest TEXT NOT NULL, "
    "revision INTEGER NOT NULL, ingested_at TEXT NOT NULL, PRIMARY KEY (source, path))",
)
_MESSAGE_COLUMNS = "source, conversation, seq, text, session, time, speaker, role"


def artifacts_path(state_dir: str | os.PathLike[str]) -> Path:
    return Path(state_dir) / FOLDER / FILE


class SqliteArtifactStore(ArtifactStore):
    """One connection per call: the CLI ingests, checks or copies, then exits."""

    def __init__(self, state_dir: str | os.PathLike[str]):
        self.path = artifacts_path(state_dir)

    def ingested(self, source: str, path: str) -> IngestedFile | None:
        with self._connection() as conn:
            return _file(conn, source, path)

    def store(self, batch: Batch, file: IngestedFile, revising: bool,
              read_from: IngestedFile | None) -> Stored:
        with self._connection() as conn:
            def work() -> Stored:
                check_extent(_file(conn, file.source, file.path), read_from, file.path)
                return _store(conn, batch, file, revising)
            return _transaction(conn, work)

    def check(self) -> CheckReport:
        if not self.path.exists():
            return CheckReport(conversations=0, records=0)
        with self._connection() as conn:
            return _check(conn)

    def backup(self, dest: str) -> str:
        target = Path(dest).expanduser()
        if target.exists():
            raise InvalidRequest(f"{target} exists: name a new file for the copy")
        temp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
        try:
            with self._connection() as conn, _errors(f"cannot copy the artifact store to {target}"):
                _create_private(temp)
                copy = apsw.Connection(str(temp))
                try:
                    _copy(conn, copy)
                    copy.execute("PRAGMA journal_mode=DELETE").fetchall()  # one file
                    report = _check(copy)
                finally:
                    copy.close()
            if not report.ok:
                raise StoreError(f"the copy fails its check: {'; '.join(report.problems[:3])}")
            digest = _sha256(temp)
            os.replace(temp, target)
            # Written last: a copy cut short by a crash has no digest, and restore refuses it.
            _write_private(Path(f"{target}.sha256"), f"{digest}  {target.name}\n")
        finally:
            temp.unlink(missing_ok=True)
        return digest

    def restore(self, src: str) -> CheckReport:
        source = Path(src).expanduser()
        _verify_digest(source)
        with _errors(f"cannot open the copy {source}"):
            copy = apsw.Connection(source.resolve().as_uri() + "?immutable=1",
                                   flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
        try:
            try:
                report = _check(copy)
            except apsw.Error as exc:
                report = CheckReport(conversations=0, records=0, problems=(str(exc),))
            if not report.ok:
                raise InvalidRequest(f"{source} fails its check, nothing restored: "
                                     f"{'; '.join(report.problems[:3])}")
            with self._connection() as conn:
                _copy(copy, conn)
                return _check(conn)
        finally:
            copy.close()

    @contextmanager
    def _connection(self) -> Iterator[apsw.Connection]:
        with _errors(f"cannot open the artifact store {self.path}"):
            _private_folder(self.path.parent)
            if not self.path.exists():
                _create_private(self.path)
            conn = apsw.Connection(str(self.path), flags=apsw.SQLITE_OPEN_READWRITE)
        try:
            with _errors(f"the artifact store {self.path} failed"):
                _prepare(conn)
                yield conn
        finally:
            conn.close()


def _prepare(conn: apsw.Connection) -> None:
    conn.set_busy_timeout(BUSY_MS)
    if conn.execute("PRAGMA journal_mode=WAL").fetchall()[0][0] != "wal":
        raise StoreError("the artifact store cannot use WAL")
    conn.execute("PRAGMA synchronous=FULL").fetchall()  # the truth: durable once it returned
    if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'meta'").fetchone() is None:
        _transaction(conn, lambda: _create(conn))  # only once: a reader takes no write lock


def _create(conn: apsw.Connection) -> None:
    for statement in _TABLES:
        conn.execute(statement)
    conn.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (str(SCHEMA),))


def _store(conn: apsw.Connection, batch: Batch, file: IngestedFile, revising: bool) -> Stored:
    counts = {change: 0 for change in Change}
    for conversation in batch.conversations:
        stored = _conversation(conn, conversation.source, conversation.conversation)
        where = _first_position(batch, conversation)
        change = scope_change(stored, conversation, revising, where)
        if change is not Change.UNCHANGED:
            conn.execute("INSERT OR REPLACE INTO conversations VALUES (?, ?, ?, ?, ?)",
                         (conversation.source, conversation.conversation,
                          conversation.repository, conversation.project, conversation.ticket))
    now = datetime.now(timezone.utc).isoformat(timespec="seconds")
    for message in batch.messages:
        row = conn.execute("SELECT digest, revision FROM messages WHERE source = ? AND "
                           "conversation = ? AND seq = ? AND current = 1", message.key).fetchone()
        where = batch.positions[message.key]
        change = change_of(row[0] if row else None, message, revising, where)
        counts[change] += 1
        if change is Change.UNCHANGED:
            continue
        if row is not None:
            conn.execute("UPDATE messages SET current = 0 WHERE source = ? AND conversation = ? "
                         "AND seq = ? AND current = 1", message.key)
        conn.execute("INSERT INTO messages VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?)",
                     (*message.key, row[1] + 1 if row else 0, message.session, message.time,
                      message.speaker, message.role, message.text, message.digest, where, now))
    _record_file(conn, file, now)
    return Stored(new=counts[Change.NEW], unchanged=counts[Change.UNCHANGED],
                  revised=counts[Change.REVISED])


def _file(conn: apsw.Connection, source: str, path: str) -> IngestedFile | None:
    row = conn.execute("SELECT size, lines, digest, revision FROM files "
                       "WHERE source = ? AND path = ?", (source, path)).fetchone()
    if row is None:
        return None
    return IngestedFile(source=source, path=path, size=row[0], lines=row[1], digest=row[2],
                        revision=row[3])


def _record_file(conn: apsw.Connection, file: IngestedFile, now: str) -> None:
    if _file(conn, file.source, file.path) == file:
        return  # nothing new: the store is left byte for byte as it was
    conn.execute("INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?, ?, ?)",
                 (file.source, file.path, file.size, file.lines, file.digest, file.revision, now))


def _conversation(conn: apsw.Connection, source: str, conversation: str) -> Conversation | None:
    row = conn.execute("SELECT repository, project, ticket FROM conversations WHERE source = ? "
                       "AND conversation = ?", (source, conversation)).fetchone()
    if row is None:
        return None
    return Conversation(source=source, conversation=conversation, repository=row[0],
                        project=row[1], ticket=row[2])


def _first_position(batch: Batch, conversation: Conversation) -> str:
    return next((where for key, where in batch.positions.items()
                 if key[:2] == (conversation.source, conversation.conversation)), "the batch")


def _check(conn: apsw.Connection) -> CheckReport:
    problems = [f"database: {row[0]}" for row in conn.execute("PRAGMA integrity_check")
                if row[0] != "ok"]
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if missing := sorted({"conversations", "messages", "files", "meta"} - tables):
        return CheckReport(conversations=0, records=0, problems=(
            *problems, f"not an artifact store: no table {', '.join(missing)}"))
    records = 0
    for row in conn.execute(f"SELECT {_MESSAGE_COLUMNS}, revision, digest FROM messages"):
        records += 1
        try:
            message = Message(source=row[0], conversation=row[1], seq=row[2], text=row[3],
                              session=row[4], time=row[5], speaker=row[6], role=row[7])
        except (TypeError, ValueError) as exc:
            problems.append(f"{row[0]}/{row[1]}#{row[2]} (revision {row[8]}) unreadable: {exc}")
            continue
        if message.digest != row[9]:
            problems.append(f"{row[0]}/{row[1]}#{row[2]} (revision {row[8]}) does not match "
                            f"its digest")
    orphans = conn.execute("SELECT COUNT(*) FROM messages m WHERE NOT EXISTS (SELECT 1 FROM "
                           "conversations c WHERE c.source = m.source AND "
                           "c.conversation = m.conversation)").fetchone()[0]
    if orphans:
        problems.append(f"{orphans} messages belong to no conversation")
    conversations = conn.execute("SELECT COUNT(*) FROM conversations").fetchone()[0]
    return CheckReport(conversations=conversations, records=records, problems=tuple(problems))


def _copy(source: apsw.Connection, dest: apsw.Connection) -> None:
    # SQLite's online backup: a consistent copy of one committed state, however busy.
    with dest.backup("main", source, "main") as backup:
        backup.step(-1)


def _transaction(conn: apsw.Connection, work: Callable[[], T]) -> T:
    conn.execute("BEGIN IMMEDIATE")  # the write lock up front: a second writer waits
    try:
        result = work()
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return result


def _verify_digest(source: Path) -> None:
    record = Path(f"{source}.sha256")
    try:
        expected = record.read_text(encoding="utf-8").split()[0]
    except FileNotFoundError as exc:
        raise InvalidRequest(f"{source} has no {record.name} beside it: only a copy made by "
                             f"`ai-memory artifacts backup` is restored") from exc
    except (OSError, UnicodeDecodeError, IndexError) as exc:
        raise InvalidRequest(f"cannot read {record}: {exc}") from exc
    try:
        actual = _sha256(source)
    except OSError as exc:
        raise InvalidRequest(f"cannot read {source}: {exc.strerror or exc}") from exc
    if actual != expected:
        raise InvalidRequest(f"{source} does not match its digest in {record.name} (the copy "
                             f"changed since it was made): nothing restored")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _private_folder(path: Path) -> None:
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    if os.name != "nt":
        os.chmod(path, 0o700)


def _create_private(path: Path) -> None:
    # SQLite gives the -wal and -shm files the database file's mode: 0600 covers all three.
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))
    if os.name != "nt":
        os.chmod(path, 0o600)


def _write_private(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)


@contextmanager
def _errors(what: str) -> Iterator[None]:
    try:
        yield
    except (apsw.Error, OSError) as exc:
        raise StoreError(f"{what}: {exc}") from exc
