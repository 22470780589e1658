"""Where the index lives under the state directory, and the small files that say what to trust.

index/index-<id>.sqlite   the live database (WAL: -wal and -shm beside it); a full rebuild
                          writes a new one under staging/ and CURRENT switches to it
index/CURRENT             which database is live, and its size and mtime after the last
                          checkpoint its refresher made: any other change to it is damage
index/last-good-<g>.sqlite  a copy of the last full build (generation g), served read-only
                          when the live database is damaged; last-good.json names it and
                          holds its SHA-256
index/DAMAGED             set by the process that found the live database damaged
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import time
from datetime import datetime, timezone
from pathlib import Path

from attrs import frozen

from memory.adapters.sqlite.connection import store_errors
from memory.ports.errors import StoreError

FORMAT = 2
DB_FILE = re.compile(r"^index-(?P<id>[A-Za-z0-9][A-Za-z0-9._-]*)\.sqlite$")
COPY_FILE = re.compile(r"^last-good-[A-Za-z0-9][A-Za-z0-9._-]*\.sqlite$")
OLD_FILE = re.compile(r"^gen-[A-Za-z0-9][A-Za-z0-9._-]*\.sqlite$")  # schema 1 generations


class OldLayout(StoreError):
    """The index folder holds generation files of schema 1 (ai-memory before in-place updates)."""


@frozen(kw_only=True)
class Pointer:
    """What CURRENT says."""

    database: str  # the live database's id: index/index-<database>.sqlite
    created: str
    size: int | None = None
    mtime_ns: int | None = None

    @property
    def file(self) -> str:
        return f"index-{self.database}.sqlite"


@frozen(kw_only=True)
class LastGood:
    """What last-good.json says about the copy beside it."""

    file: str
    generation: str
    database: str
    created: str
    size: int
    sha256: str


@frozen(kw_only=True)
class DatabaseFile:
    id: str
    path: Path


def new_generation_id() -> str:
    return f"{datetime.now(timezone.utc):%Y%m%dT%H%M%SZ}-{secrets.token_hex(3)}"


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def fsync_file(path: Path) -> None:
    with open(path, "rb+") as handle:
        os.fsync(handle.fileno())


def fsync_dir(path: Path) -> None:
    # Windows cannot open a directory for fsync; NTFS makes the rename durable itself.
    if os.name == "nt":
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def replace(source: Path, target: Path) -> None:
    # On Windows a reader holding the target open for a moment blocks the rename; retry
    # briefly rather than fail a whole refresh over a microsecond-long read.
    for attempt in range(10):
        try:
            os.replace(source, target)
            return
        except PermissionError:
            if os.name != "nt" or attempt == 9:
                raise
            time.sleep(0.02 * (attempt + 1))


def stat_key(path: Path) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StoreError(f"cannot stat {path}: {exc}") from exc
    return (st.st_ino, st.st_size, st.st_mtime_ns)


class IndexLayout:
    """The paths of the index folder and the JSON files in it."""

    def __init__(self, state_dir: str | os.PathLike[str]):
        self.state_dir = Path(state_dir)
        self.dir = self.state_dir / "index"
        self.staging = self.dir / "staging"
        self.pointer = self.dir / "CURRENT"
        self.marker = self.dir / "DAMAGED"
        self.last_good_record = self.dir / "last-good.json"

    def database_path(self, database: str) -> Path:
        return self.dir / f"index-{database}.sqlite"

    def last_good_path(self, generation: str) -> Path:
        return self.dir / f"last-good-{generation}.sqlite"

    def staging_path(self, name: str) -> Path:
        return self.staging / f"{name}.sqlite"

    def relative(self, path: Path) -> str:
        return path.relative_to(self.state_dir).as_posix()

    def signature(self) -> tuple:
        """Changes whenever CURRENT or DAMAGED is written (each is replaced, never edited)."""
        return (stat_key(self.pointer), stat_key(self.marker))

    def read_pointer(self) -> Pointer | None:
        """The pointer, None when nothing was ever published; StoreError when unusable."""
        data = self._read_json(self.pointer, "index pointer CURRENT")
        if data is None:
            return None
        if data.get("format") != FORMAT:
            if OLD_FILE.match(str(data.get("file", ""))):
                raise OldLayout(f"the index in {self.dir} was written by an older ai-memory "
                                f"(one file per generation): the next refresh rebuilds it "
                                f"from the notes")
            raise StoreError(f"index pointer CURRENT has no format {FORMAT}: {data!r:.200}")
        try:
            pointer = Pointer(database=str(data["database"]), created=str(data.get("created", "")),
                              size=_int_or_none(data.get("size")),
                              mtime_ns=_int_or_none(data.get("mtime_ns")))
        except KeyError as exc:
            raise StoreError(f"index pointer CURRENT lacks {exc}") from exc
        # The pointer may only name a database file inside index/, never another path.
        if DB_FILE.match(pointer.file) is None:
            raise StoreError(f"index pointer names an invalid file {pointer.file!r}")
        return pointer

    def write_pointer(self, pointer: Pointer, durable: bool = True) -> None:
        """Atomically; `durable` fsyncs it (a pointer lost to a power cut but for the
        size it records is rewritten by the next refresh)."""
        self._write_json(self.pointer, {"format": FORMAT, "database": pointer.database,
                                        "file": pointer.file, "created": pointer.created,
                                        "size": pointer.size, "mtime_ns": pointer.mtime_ns},
                         durable)

    def read_damage(self) -> dict | None:
        try:
            data = self._read_json(self.marker, "index damage marker")
        except StoreError as exc:  # a garbled marker still says something is wrong
            return {"file": None, "why": str(exc)}
        return data if isinstance(data, dict) else None

    def write_damage(self, file: str, why: str) -> None:
        self._write_json(self.marker, {"file": file, "why": why, "time": now_iso()})

    def clear_damage(self) -> None:
        with store_errors(f"cannot remove {self.marker}"):
            self.marker.unlink(missing_ok=True)

    def read_last_good(self) -> LastGood | None:
        data = self._read_json(self.last_good_record, "last-good record")
        if data is None:
            return None
        try:
            record = LastGood(file=str(data["file"]), generation=str(data["generation"]),
                              database=str(data["database"]), created=str(data["created"]),
                              size=int(data["size"]), sha256=str(data["sha256"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise StoreError(f"last-good record is unusable: {exc}") from exc
        if COPY_FILE.match(record.file) is None:
            raise StoreError(f"last-good record names an invalid file {record.file!r}")
        return record

    def write_last_good(self, record: LastGood) -> None:
        self._write_json(self.last_good_record, {
            "file": record.file, "generation": record.generation, "database": record.database,
            "created": record.created, "size": record.size, "sha256": record.sha256})

    def databases(self) -> list[DatabaseFile]:
        """Database files in index/, newest id first (an id starts with its UTC second)."""
        found = []
        with store_errors(f"cannot list {self.dir}"):
            if not self.dir.is_dir():
                return []
            for entry in os.scandir(self.dir):
                match = DB_FILE.match(entry.name)
                if match and entry.is_file():
                    found.append(DatabaseFile(id=match.group("id"), path=Path(entry.path)))
        return sorted(found, key=lambda d: d.id, reverse=True)

    def files(self, pattern: re.Pattern) -> list[Path]:
        """Files in index/ whose names match (old-layout generations, copies, temp files)."""
        with store_errors(f"cannot list {self.dir}"):
            if not self.dir.is_dir():
                return []
            return sorted(Path(e.path) for e in os.scandir(self.dir) if pattern.match(e.name))

    # -- internals ---------------------------------------------------------------------

    @staticmethod
    def _read_json(path: Path, what: str):
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StoreError(f"cannot read {what}: {exc}") from exc
        try:
            data = json.loads(raw)
        except ValueError as exc:
            raise StoreError(f"{what} is not valid JSON: {exc}") from exc
        if not isinstance(data, dict):
            raise StoreError(f"{what} is not a JSON object")
        return data

    def _write_json(self, target: Path, data: dict, durable: bool = True) -> None:
        tmp = self.dir / f".{target.name}.{secrets.token_hex(4)}.tmp"
        with store_errors(f"cannot write {target}"):
            try:
                with open(tmp, "wb") as handle:
                    handle.write(json.dumps(data).encode("utf-8"))
                    handle.flush()
                    if durable:
                        os.fsync(handle.fileno())
                replace(tmp, target)
            finally:
                tmp.unlink(missing_ok=True)
            if durable:
                fsync_dir(self.dir)


def _int_or_none(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
