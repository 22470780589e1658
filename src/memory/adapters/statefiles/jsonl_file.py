"""JsonlFile: an append-only file of JSON objects, one per line, shared by processes.

Each record is one write() on an O_APPEND descriptor, made while holding a lock file in
`<state_dir>/locks/`, so appenders in several processes never interleave or split a line.
A crash can still leave a torn last line; readers skip it, and the next append notices
it and starts on a fresh line.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from filelock import FileLock, Timeout

from memory.adapters.statefiles.state_dir import ensure_state_dir
from memory.ports.errors import StoreError

_BLOCK = 8192
_LOCK_TIMEOUT_S = 30.0
# Read-write so the last byte can be checked; O_APPEND still sends every write to the end.
_FLAGS = os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_BINARY", 0)


def _parse(line: bytes) -> dict | None:
    """The record on a line, or None for a blank, torn or foreign line."""
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


class JsonlFile:
    """A JSONL file in the state directory, appended to under its own lock file."""

    def __init__(self, path: Path):
        self.path = path
        self._lock_path = path.parent / "locks" / f"{path.stem}.lock"

    def append(self, record: Mapping) -> None:
        try:
            data = json.dumps(dict(record), ensure_ascii=False, separators=(",", ":"))
        except (TypeError, ValueError) as exc:
            raise StoreError(f"record for {self.path.name} is not JSON: {exc}") from exc
        payload = (data + "\n").encode("utf-8")
        ensure_state_dir(self.path.parent)
        try:
            self._lock_path.parent.mkdir(exist_ok=True)
            with FileLock(str(self._lock_path), timeout=_LOCK_TIMEOUT_S):
                written, wanted = self._write(payload)
        except Timeout as exc:
            raise StoreError(f"{self.path.name} stayed locked for {_LOCK_TIMEOUT_S:g}s") from exc
        except OSError as exc:
            raise StoreError(f"cannot append to {self.path}: {exc}") from exc
        if written != wanted:
            raise StoreError(f"short write to {self.path}: {written} of {wanted} bytes")

    def _write(self, payload: bytes) -> tuple[int, int]:
        """Append payload (after a newline if the file ends torn), fsync; bytes written."""
        fd = os.open(self.path, _FLAGS, 0o600)
        try:
            if not self._ends_cleanly(fd):
                payload = b"\n" + payload
            written = os.write(fd, payload)
            os.fsync(fd)
        finally:
            os.close(fd)
        return written, len(payload)

    @staticmethod
    def _ends_cleanly(fd: int) -> bool:
        """True when the file is empty or its last byte ends a line (no torn record)."""
        if os.fstat(fd).st_size == 0:
            return True
        os.lseek(fd, -1, os.SEEK_END)
        return os.read(fd, 1) == b"\n"

    def records(self) -> Iterator[dict]:
        """Every complete record, oldest first."""
        try:
            with open(self.path, "rb") as handle:
                for line in handle:
                    if line.endswith(b"\n"):
                        record = _parse(line)
                        if record is not None:
                            yield record
        except FileNotFoundError:
            return
        except OSError as exc:
            raise StoreError(f"cannot read {self.path}: {exc}") from exc

    def last(self, matching: Callable[[dict], bool] | None = None) -> dict | None:
        """The newest complete record (that `matching` accepts), read backwards from the end."""
        try:
            with open(self.path, "rb") as handle:
                return self._last_in(handle, matching or (lambda _: True))
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StoreError(f"cannot read {self.path}: {exc}") from exc

    @staticmethod
    def _last_in(handle, matching: Callable[[dict], bool]) -> dict | None:
        end = handle.seek(0, os.SEEK_END)
        carry = b""  # start of a line that began in an earlier block
        torn = True  # until the final newline: bytes there are a torn (or empty) tail
        while end > 0:
            start = max(0, end - _BLOCK)
            handle.seek(start)
            lines = (handle.read(end - start) + carry).split(b"\n")
            if torn:
                if len(lines) == 1:
                    end = start
                    continue
                lines.pop()
                torn = False
            carry = lines.pop(0) if start > 0 else b""
            for line in reversed(lines):
                record = _parse(line)
                if record is not None and matching(record):
                    return record
            end = start
        return None
