"""Where index generations live under the state directory, and the atomic CURRENT pointer."""

from __future__ import annotations

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

GEN_FILE = re.compile(r"^gen-(?P<id>[A-Za-z0-9][A-Za-z0-9._-]*)\.sqlite$")


@frozen(kw_only=True)
class Pointer:
    """What CURRENT says: the published generation readers should open."""

    id: str
    file: str
    created: str
    # The file's size and mtime when it was published: a file that differs has changed
    # since (damage, or a copy) and is checked before it is served.
    size: int | None = None
    mtime_ns: int | None = None


@frozen(kw_only=True)
class GenerationFile:
    id: str
    path: Path
    mtime_ns: int

    @property
    def sort_key(self) -> tuple[str, int, str]:
        # The id starts with a UTC second; mtime orders two ids of the same second.
        return (self.id[:16], self.mtime_ns, self.id)


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


def _replace(source: Path, target: Path) -> None:
    # On Windows a reader holding CURRENT open for a moment blocks the rename; retry
    # briefly rather than fail a whole refresh over a microsecond-long read.
    for attempt in range(10):
        try:
            os.replace(source, target)
            return
        except PermissionError:
            if os.name != "nt" or attempt == 9:
                raise
            time.sleep(0.02 * (attempt + 1))


class IndexLayout:
    """index/gen-<id>.sqlite, index/staging/<id>.sqlite and index/CURRENT."""

    def __init__(self, state_dir: str | os.PathLike[str]):
        self.state_dir = Path(state_dir)
        self.dir = self.state_dir / "index"
        self.staging = self.dir / "staging"
        self.pointer = self.dir / "CURRENT"

    def generation_path(self, gen_id: str) -> Path:
        return self.dir / f"gen-{gen_id}.sqlite"

    def staging_path(self, gen_id: str) -> Path:
        return self.staging / f"{gen_id}.sqlite"

    def relative(self, path: Path) -> str:
        return path.relative_to(self.state_dir).as_posix()

    def pointer_signature(self) -> tuple[int, int, int] | None:
        """Cheap change detector: os.replace gives CURRENT a new inode on every publish."""
        try:
            st = os.stat(self.pointer)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StoreError(f"cannot stat {self.pointer}: {exc}") from exc
        return (st.st_ino, st.st_mtime_ns, st.st_size)

    def read_pointer(self) -> Pointer | None:
        """The pointer, None when nothing was ever published; StoreError when unreadable."""
        try:
            raw = self.pointer.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StoreError(f"cannot read index pointer: {exc}") from exc
        try:
            data = json.loads(raw)
            pointer = Pointer(id=str(data["id"]), file=str(data["file"]),
                              created=str(data.get("created", "")),
                              size=_int_or_none(data.get("size")),
                              mtime_ns=_int_or_none(data.get("mtime_ns")))
        except (ValueError, TypeError, KeyError) as exc:
            raise StoreError(f"index pointer is not valid JSON with id and file: {exc}") from exc
        # The pointer may only name a generation file inside index/, never another path.
        match = GEN_FILE.match(pointer.file)
        if match is None or match.group("id") != pointer.id:
            raise StoreError(f"index pointer names an invalid file {pointer.file!r}")
        return pointer

    def write_pointer(self, pointer: Pointer) -> None:
        data = json.dumps({"id": pointer.id, "file": pointer.file, "created": pointer.created,
                           "size": pointer.size, "mtime_ns": pointer.mtime_ns})
        tmp = self.dir / f".CURRENT.{secrets.token_hex(4)}.tmp"
        with store_errors("cannot write index pointer"):
            try:
                with open(tmp, "wb") as handle:
                    handle.write(data.encode("utf-8"))
                    handle.flush()
                    os.fsync(handle.fileno())
                _replace(tmp, self.pointer)
            finally:
                tmp.unlink(missing_ok=True)
            fsync_dir(self.dir)

    def generations(self) -> list[GenerationFile]:
        """Published generation files, newest first."""
        found = []
        with store_errors("cannot list index generations"):
            if not self.dir.is_dir():
                return []
            for entry in os.scandir(self.dir):
                match = GEN_FILE.match(entry.name)
                if match and entry.is_file():
                    found.append(GenerationFile(id=match.group("id"), path=Path(entry.path),
                                                mtime_ns=entry.stat().st_mtime_ns))
        return sorted(found, key=lambda g: g.sort_key, reverse=True)


def _int_or_none(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
