"""ChatJsonlReader: the plain format, one JSON object a line (`conversation`, `seq`, `text`
and optional `session`, `time`, `speaker`, `role`, `repository`, `project`, `ticket`)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import BinaryIO
from pathlib import Path

from memory.domain.artifacts import BatchRefused, FileRead, RawRecord
from memory.domain.errors import InvalidRequest, NotFound
from memory.ports.artifact_reader import ArtifactReader

SUFFIX = ".jsonl"
MAX_LINE = 8 << 20  # bytes: one message this long is a pasted dump, not a turn of a chat
_BLOCK = 1 << 20


class ChatJsonlReader(ArtifactReader):
    def files(self, paths: Sequence[str]) -> tuple[str, ...]:
        found: list[str] = []
        for name in paths:
            path = Path(name).expanduser()
            if path.is_dir():
                found.extend(sorted(str(p.resolve()) for p in path.rglob(f"*{SUFFIX}")
                                    if p.is_file() and not _hidden(p, path)))
            elif path.is_file():
                found.append(str(path.resolve()))
            else:
                raise NotFound(f"no file or folder {name}")
        return tuple(dict.fromkeys(found))

    def prefix_digest(self, path: str, size: int) -> str | None:
        digest = hashlib.sha256()
        with _opened(path) as handle:
            left = size
            while left > 0:
                block = handle.read(min(_BLOCK, left))
                if not block:
                    return None
                digest.update(block)
                left -= len(block)
        return digest.hexdigest()

    def read(self, path: str, offset: int = 0, lines: int = 0) -> FileRead:
        digest = hashlib.sha256()
        records: list[RawRecord] = []
        size, number, left = offset, lines, None
        with _opened(path) as handle:
            _hash_prefix(handle, offset, digest)
            for raw in iter(lambda: handle.readline(MAX_LINE + 1), b""):
                if len(raw) > MAX_LINE:
                    raise BatchRefused(f"{path}:{number + 1}", f"a line over {MAX_LINE >> 20} MiB")
                fields = _parsed(path, number + 1, raw)
                if fields is _INCOMPLETE:
                    left = f"{path}:{number + 1}: the last line is incomplete (still being " \
                           f"written?): left for the next ingest"
                    break
                number += 1
                size += len(raw)
                digest.update(raw)
                if isinstance(fields, dict):
                    records.append(RawRecord(where=f"{path}:{number}", fields=fields))
        return FileRead(path=path, records=tuple(records), size=size, lines=number,
                        digest=digest.hexdigest(), left=left)


_INCOMPLETE = object()


def _parsed(path: str, number: int, raw: bytes) -> object:
    """The line's object; None for a blank line; _INCOMPLETE for a last line without its
    newline that is not yet JSON."""
    where = f"{path}:{number}"
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BatchRefused(where, f"not UTF-8 ({exc.reason})") from exc
    if not text.strip():
        return None
    try:
        value = json.loads(text)
    except ValueError as exc:
        if not raw.endswith(b"\n"):
            return _INCOMPLETE
        raise BatchRefused(where, f"not valid JSON ({exc})") from exc
    if not isinstance(value, dict):
        raise BatchRefused(where, f"not a JSON object but {type(value).__name__}")
    return value


def _hash_prefix(handle: BinaryIO, offset: int, digest) -> None:
    left = offset
    while left > 0:
        block = handle.read(min(_BLOCK, left))
        if not block:
            raise InvalidRequest(f"{handle.name} is shorter than the {offset} bytes read before")
        digest.update(block)
        left -= len(block)


@contextmanager
def _opened(path: str) -> Iterator[BinaryIO]:
    """The file opened for binary reading; a missing or unreadable file is the caller's error."""
    try:
        handle = open(path, "rb")
    except FileNotFoundError as exc:
        raise NotFound(f"no file {path}") from exc
    except OSError as exc:
        raise InvalidRequest(f"cannot read {path}: {exc.strerror or exc}") from exc
    with handle:
        yield handle


def _hidden(path: Path, top: Path) -> bool:
    return any(part.startswith(".") for part in path.relative_to(top).parts)


def lines_of(records: Iterable[dict]) -> str:
    """The plain format's text for these records (converters and tests write it)."""
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)

