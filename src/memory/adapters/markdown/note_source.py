"""MarkdownNoteSource: scans the memory root for notes and reads one: file I/O and YAML only."""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Sequence
from pathlib import Path

import yaml

from memory.adapters.markdown.atomic_files import LinkOnTheWay
from memory.adapters.markdown.file_names import (find_entry, printable_name, printable_path,
                                                 real_path)
from memory.adapters.markdown.note_places import NotePlaces
from memory.adapters.markdown.process_key import PROCESS_KEY
from memory.domain.chunking import CHUNKING_VERSION
from memory.domain.errors import InvalidRequest, NotFound
from memory.domain.markdown import front_matter_lines, split_lines
from memory.domain.note_reading import read_note
from memory.domain.note_text import ContentKey
from memory.domain.notes import NoteDocument, is_markdown, note_path
from memory.domain.refresh import SourceFile, SourceScan
from memory.ports.note_source import NoteSource

YAML_ERRORS = (yaml.YAMLError, ValueError, TypeError, OverflowError, RecursionError)
# Real front matter nests a few levels; a thousand levels would take every later reader
# (the graph build, JSON writers) past Python's recursion limit.
MAX_FRONT_MATTER_DEPTH = 32


class _BoundedLoader(yaml.SafeLoader):
    """SafeLoader refusing aliases (a few hundred bytes of nested aliases expand to
    gigabytes) and nesting deeper than MAX_FRONT_MATTER_DEPTH."""

    depth = 0

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            raise yaml.composer.ComposerError(None, None, "YAML aliases are not allowed",
                                              self.peek_event().start_mark)
        if self.depth >= MAX_FRONT_MATTER_DEPTH:
            raise yaml.composer.ComposerError(
                None, None, f"nested deeper than {MAX_FRONT_MATTER_DEPTH} levels",
                self.peek_event().start_mark)
        self.depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


def _plain(value):
    """Front matter as JSON-able values: dates become ISO strings, keys strings."""
    if isinstance(value, dict):
        return {k if isinstance(k, str) else str(_plain(k)): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((_plain(v) for v in value), key=str)
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value


def _yaml_reason(error: Exception) -> str:
    problem = getattr(error, "problem", None) or (str(error).splitlines() or [""])[0]
    mark = getattr(error, "problem_mark", None)
    where = f" (line {mark.line + 2})" if mark is not None else ""  # +2: 0-based, after `---`
    return f"{problem or type(error).__name__}{where}"[:200]


class MarkdownNoteSource(NoteSource):
    """Notes under a root folder; dot-folders (.git, .obsidian, .trash, .ai-memory), the
    state folder (`excluded`) and links pointing into any of them are skipped (NotePlaces).
    A note's content_hash is keyed with `key`."""

    def __init__(self, root: str | Path, *, key: ContentKey = PROCESS_KEY,
                 excluded: Sequence[str | os.PathLike[str]] = (),
                 max_file_bytes: int = 2_000_000,
                 max_front_matter_bytes: int = 64_000, window: int = 8, overlap: int = 2):
        if window < 1 or not 0 <= overlap < window:
            raise InvalidRequest(f"chunk window {window} / overlap {overlap} is not usable")
        self._root = os.path.realpath(os.fspath(root))
        self._places = NotePlaces(self._root, excluded)
        self._key = key
        self._max_file_bytes = max_file_bytes
        self._max_front_matter_bytes = max_front_matter_bytes
        self._window, self._overlap = window, overlap

    @property
    def chunking(self) -> str:
        # The hash rule is part of it: an index holding hashes of another key, or plain
        # sha256 digests from before hashes were keyed, is rebuilt rather than kept.
        return (f"markdown-v{CHUNKING_VERSION} window={self._window} overlap={self._overlap} "
                f"hash=hmac-sha256:{self._key.fingerprint}")

    @property
    def root(self) -> str:
        return self._root

    # -- scan ---------------------------------------------------------------------------

    def scan(self) -> SourceScan:
        if not os.path.isdir(self._root):
            raise NotFound(f"memory root is not a directory: {self._root}")
        files: dict[str, SourceFile] = {}
        warnings: list[str] = []
        pending = [("", self._root)]  # (folder as a note path spells it, real folder)
        while pending:
            folder, real = pending.pop()
            try:
                with os.scandir(real) as it:
                    entries = sorted(it, key=lambda e: e.name)
            except OSError as e:
                if not folder:  # an unreadable root must not look like an empty memory
                    raise NotFound(f"memory root cannot be read: {self._root}: {e}") from e
                warnings.append(f"{folder}: folder skipped: {e.strerror or e}")
                continue
            for entry in entries:
                name = printable_name(entry.name)
                rel = f"{folder}/{name}" if folder else name
                if name != entry.name and os.path.lexists(os.path.join(real, name)):
                    warnings.append(f"{rel}: skipped, another file is named exactly so")
                    continue
                try:
                    self._visit(entry, rel, pending, files, warnings)
                except OSError as e:
                    warnings.append(f"{rel}: skipped: {e.strerror or e}")
        return SourceScan(files=dict(sorted(files.items())), warnings=tuple(warnings))

    def _visit(self, entry: os.DirEntry, rel: str, pending: list[tuple[str, str]],
               files: dict[str, SourceFile], warnings: list[str]) -> None:
        if entry.name.startswith("."):
            return  # hidden folders (.git, .obsidian, .trash, .ai-memory) and files
        is_md = is_markdown(entry.name)
        if entry.is_symlink():
            real = os.path.realpath(entry.path)
            if not os.path.exists(real):
                if is_md:
                    warnings.append(f"{rel}: skipped, broken symlink")
                return
            if os.path.isdir(real):
                if not self._places.inside(real):
                    warnings.append(f"{rel}: skipped, symlink points outside the memory root")
                return  # its target inside the root is scanned where it lives; no loops
            reason = self._places.refusal(real) if is_md else None
            if reason:
                warnings.append(f"{rel}: skipped, symlink {reason}")
                return
        elif entry.is_dir(follow_symlinks=False):
            if not self._places.excluded(entry.path):
                pending.append((rel, entry.path))
            return
        if not is_md or not entry.is_file():
            return
        info = entry.stat()
        if info.st_size > self._max_file_bytes:
            warnings.append(f"{rel}: skipped, {info.st_size} bytes is over the "
                            f"{self._max_file_bytes}-byte limit")
            return
        files[rel] = SourceFile(path=rel, size=info.st_size, mtime_ns=info.st_mtime_ns)

    def stat(self, path: str) -> SourceFile | None:
        """The scan's rules, applied to one entry of one folder: what scan() would list."""
        rel = printable_path(note_path(path))
        parts = rel.split("/")
        folder = self._root
        for part in parts[:-1]:
            folder = os.path.join(folder, find_entry(folder, part))
            if part.startswith(".") or os.path.islink(folder) or not os.path.isdir(folder) \
                    or self._places.excluded(folder):
                return None  # the scan never enters hidden, linked or state folders
        files: dict[str, SourceFile] = {}
        try:
            with os.scandir(folder) as it:
                named = [e for e in it if printable_name(e.name) == parts[-1]]
            # A name spelled exactly so wins over one escaped to that spelling, as in scan.
            entry = next((e for e in named if e.name == parts[-1]), named[0] if named else None)
            if entry is not None:
                self._visit(entry, rel, [], files, [])
        except OSError:
            return None
        return files.get(rel)

    # -- load ---------------------------------------------------------------------------

    def load(self, path: str) -> NoteDocument:
        rel = printable_path(note_path(path))
        real = os.path.realpath(real_path(self._root, rel))
        reason = self._places.refusal(real)
        if reason:
            raise InvalidRequest(f"{rel}: not a note, it {reason}")
        raw = self._read(rel, real)
        if b"\x00" in raw:
            raise InvalidRequest(f"{rel}: binary file (NUL bytes), not a Markdown note")
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as e:
            raise InvalidRequest(f"{rel}: not valid UTF-8 (byte {e.start})") from None
        lines = split_lines(text)
        warnings: list[str] = []
        data = self._front_matter(rel, front_matter_lines(lines)[0], warnings)
        return read_note(rel, lines, data, content_hash=self._key.hash(raw),
                         warnings=warnings, window=self._window, overlap=self._overlap)

    def _read(self, rel: str, real: str) -> bytes:
        try:
            raw, info = self._places.read(real, self._max_file_bytes + 1)
        except LinkOnTheWay:
            raise InvalidRequest(f"{rel}: became a symbolic link while it was read; "
                                 "not read") from None
        except IsADirectoryError:
            raise NotFound(f"{rel}: not a file") from None
        except (FileNotFoundError, NotADirectoryError):
            raise NotFound(f"no note at {rel}") from None
        except OSError as e:
            raise InvalidRequest(f"{rel}: cannot be read: {e.strerror or e}") from e
        if len(raw) > self._max_file_bytes:
            raise InvalidRequest(f"{rel}: {info.st_size} bytes is over the "
                                 f"{self._max_file_bytes}-byte limit")
        return raw

    def _front_matter(self, rel: str, yaml_text: str | None, warnings: list[str]) -> dict | None:
        """The front matter block as plain data; None (and a warning) when it cannot be."""
        if yaml_text is None:
            return None
        reason = None
        if len(yaml_text.encode("utf-8")) > self._max_front_matter_bytes:
            reason = f"over {self._max_front_matter_bytes} bytes"
        else:
            try:
                data = _plain(yaml.load(yaml_text, Loader=_BoundedLoader))  # noqa: S506
            except YAML_ERRORS as e:
                data, reason = None, _yaml_reason(e)
            if data is not None and not isinstance(data, dict):
                reason = f"expected a mapping, got {type(data).__name__}"
        if reason:
            warnings.append(f"{rel}: front matter ignored: {reason}")
            return None
        return data or {}
