"""Reading and replacing one config file safely: exact bytes, backups, atomic swaps, diffs."""

from __future__ import annotations

import difflib
import os
import tempfile
from dataclasses import dataclass
from datetime import datetime, timezone
from enum import StrEnum
from pathlib import Path

from memory.entrypoints.clients.errors import ConfigSyntaxError

BACKUP_INFIX = ".ai-memory-backup-"


class Change(StrEnum):
    """What setup does to a file (CREATED, CHANGED, REMOVED, UNCHANGED) or, in a client's
    result, to its config or skill copy (CREATED, UPDATED, UNCHANGED, REMOVED, SKIPPED, ERROR)."""

    CREATED = "created"
    UPDATED = "updated"
    CHANGED = "changed"
    UNCHANGED = "unchanged"
    REMOVED = "removed"
    SKIPPED = "skipped"
    ERROR = "error"


def read_text(path: Path) -> str | None:
    """The file's text exactly as stored (no newline translation), or None if absent."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ConfigSyntaxError(f"not UTF-8 text: {error}") from error


def write_atomic(path: Path, content: str | bytes) -> None:
    """Replace `path` in one step (temp file beside it, fsync, rename), keeping its mode."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(content.encode("utf-8") if isinstance(content, str) else content)
            handle.flush()
            os.fsync(handle.fileno())
        if path.exists():
            os.chmod(temp, path.stat().st_mode & 0o7777)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def backup(path: Path, now: datetime | None = None) -> Path:
    """Copy the current bytes to `<file>.ai-memory-backup-<UTC timestamp>` before a change."""
    stamp = (now or datetime.now(timezone.utc)).strftime("%Y%m%dT%H%M%SZ")
    target = path.with_name(f"{path.name}{BACKUP_INFIX}{stamp}")
    serial = 1
    while target.exists():
        target = path.with_name(f"{path.name}{BACKUP_INFIX}{stamp}-{serial}")
        serial += 1
    data = path.read_bytes()
    with open(target, "xb") as handle:
        handle.write(data)
    os.chmod(target, path.stat().st_mode & 0o7777)
    return target


def unified_diff(path: Path, old: str | None, new: str | None) -> str:
    """A unified diff between two versions of a file (None: the file does not exist)."""
    before = (old or "").splitlines(keepends=True)
    after = (new or "").splitlines(keepends=True)
    lines = difflib.unified_diff(
        before, after,
        fromfile=str(path) if old is not None else "/dev/null",
        tofile=str(path) if new is not None else "/dev/null")
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                   for line in lines)


@dataclass(frozen=True, kw_only=True)
class FileDiff:
    """What a change does to one file: `created`, `changed`, `removed` or `unchanged`,
    the lines it adds and removes, and the unified diff itself."""

    path: Path
    action: Change
    added: int = 0
    removed: int = 0
    diff: str = ""

    @classmethod
    def between(cls, path: Path, old: str | None, new: str | None) -> FileDiff:
        if old == new:
            return cls(path=path, action=Change.UNCHANGED)
        diff = unified_diff(path, old, new)
        body = [line for line in diff.splitlines()
                if not line.startswith(("---", "+++", "@@", "\\"))]
        action = Change.CREATED if old is None else Change.REMOVED if new is None \
            else Change.CHANGED
        return cls(path=path, action=action, diff=diff,
                   added=sum(line.startswith("+") for line in body),
                   removed=sum(line.startswith("-") for line in body))

    def summary(self) -> str:
        """One line: what happens to the file and how many lines it gains and loses."""
        counts = "" if self.action is Change.UNCHANGED else f" (+{self.added} -{self.removed})"
        return f"{self.action:<9} {self.path}{counts}"
