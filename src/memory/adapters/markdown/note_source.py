"""MarkdownNoteSource: scans the memory root for notes and parses one note, never writing."""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import re
import stat
from pathlib import Path, PurePosixPath

import yaml

from memory.domain.chunking import (CHUNKING_VERSION, chunk_lines, extract_links,
                                    first_heading, scope_from_path, split_front_matter,
                                    split_lines)
from memory.domain.errors import InvalidRequest, NotFound
from memory.domain.notes import Note, NoteDocument, ScopeKind, Status, note_path
from memory.domain.refresh import SourceFile, SourceScan
from memory.ports.note_source import NoteSource

WIKI_VALUE = re.compile(r"^\[\[([^\[\]]+)\]\]$")
# Plain strings in these fields often list several values: `tags: a, b`.
COMMA_LISTS = frozenset({"tags", "related_repos", "related_projects"})
YAML_ERRORS = (yaml.YAMLError, ValueError, TypeError, OverflowError, RecursionError)


class _NoAliasLoader(yaml.SafeLoader):
    """SafeLoader refusing aliases: a few hundred bytes of nested aliases expand to gigabytes."""

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            raise yaml.composer.ComposerError(None, None, "YAML aliases are not allowed",
                                              self.peek_event().start_mark)
        return super().compose_node(parent, index)


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


def _scalar_text(value) -> str | None:
    """A scalar front matter value as text (dates ISO); None for anything else or empty."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, (str, int, float)):
        return str(value).strip() or None
    return None


class _Fields:
    """Typed reads of a front matter mapping; every value it has to ignore leaves a warning."""

    def __init__(self, data: dict, path: str, warnings: list[str]):
        self.data, self._path, self._warnings = data, path, warnings

    def warn(self, key: str, reason: str) -> None:
        self._warnings.append(f"{self._path}: {key} ignored: {reason}")

    def text(self, key: str) -> str | None:
        value = self.data.get(key)
        text = _scalar_text(value)
        if text is None and value is not None and not isinstance(value, str):
            self.warn(key, f"expected text, got {type(value).__name__}")
        return text

    def values(self, key: str) -> tuple[str, ...]:
        value = self.data.get(key)
        items = value if isinstance(value, list) else [] if value is None else [value]
        out: list[str] = []
        for item in items:
            # Unquoted `[[Note]]` in YAML is a list inside a list: read it as the wikilink.
            for leaf in item if isinstance(item, list) else [item]:
                if isinstance(leaf, (dict, list)):
                    self.warn(key, f"nested {type(leaf).__name__} value")
                    continue
                text = _scalar_text(leaf) or ""
                parts = text.split(",") if key in COMMA_LISTS else [text]
                out.extend(_unwiki(p.strip().lstrip("#") if key == "tags" else p.strip())
                           for p in parts)
        return tuple(dict.fromkeys(v for v in out if v))


def _unwiki(value: str) -> str:
    m = WIKI_VALUE.match(value)
    return m.group(1).split("|", 1)[0].split("#", 1)[0].strip() if m else value


def _declared_scope(fields: _Fields, from_path: dict) -> dict:
    """`primary_scope: {kind, id}` wins over the folder; the id may be left to the folder."""
    declared = fields.data.get("primary_scope")
    if declared is None:
        return from_path
    if not isinstance(declared, dict):
        fields.warn("primary_scope", "expected a mapping with kind and id")
        return from_path
    kind = ScopeKind.parse(str(declared.get("kind") or ""))
    if kind is None:
        fields.warn("primary_scope", f"unknown kind {declared.get('kind')!r}")
        return from_path
    ident = _scalar_text(declared.get("id"))
    scope = {"scope_kind": kind, "scope_id": ident, "repository": None, "project": None,
             "ticket": None}
    owner = {ScopeKind.REPO: "repository", ScopeKind.PROJECT: "project",
             ScopeKind.TICKET: "ticket"}.get(kind)
    if owner:
        key = ident or from_path[owner]
        if not key:
            fields.warn("primary_scope", f"kind {kind.value} needs an id")
            return from_path
        key = key.upper() if kind is ScopeKind.TICKET else key.lower()
        scope.update({owner: key, "scope_id": key})
        if kind is ScopeKind.TICKET:  # a ticket lives inside the repo/project of its folder
            scope.update(repository=from_path["repository"], project=from_path["project"])
    return scope


def _status(fields: _Fields) -> Status:
    raw = fields.text("status")
    status = Status.parse(raw)
    if raw and status.value != raw.lower().replace("_", "-"):
        fields.warn("status", f"unknown value {raw!r}, read as active")
    return status


class MarkdownNoteSource(NoteSource):
    """Notes under a root folder; dot-folders (.git, .obsidian, .trash, .ai-memory) are skipped."""

    def __init__(self, root: str | Path, *, max_file_bytes: int = 2_000_000,
                 max_front_matter_bytes: int = 64_000, window: int = 8, overlap: int = 2):
        if window < 1 or not 0 <= overlap < window:
            raise InvalidRequest(f"chunk window {window} / overlap {overlap} is not usable")
        self._root = os.path.realpath(os.fspath(root))
        self._max_file_bytes = max_file_bytes
        self._max_front_matter_bytes = max_front_matter_bytes
        self._window, self._overlap = window, overlap

    @property
    def chunking(self) -> str:
        return f"markdown-v{CHUNKING_VERSION} window={self._window} overlap={self._overlap}"

    @property
    def root(self) -> str:
        return self._root

    def _inside(self, real: str) -> bool:
        return os.path.commonpath([self._root, real]) == self._root

    # -- scan ---------------------------------------------------------------------------

    def scan(self) -> SourceScan:
        if not os.path.isdir(self._root):
            raise NotFound(f"memory root is not a directory: {self._root}")
        files: dict[str, SourceFile] = {}
        warnings: list[str] = []
        pending = [""]
        while pending:
            folder = pending.pop()
            try:
                with os.scandir(os.path.join(self._root, folder)) as it:
                    entries = sorted(it, key=lambda e: e.name)
            except OSError as e:
                if not folder:  # an unreadable root must not look like an empty memory
                    raise NotFound(f"memory root cannot be read: {self._root}: {e}") from e
                warnings.append(f"{folder}: folder skipped: {e.strerror or e}")
                continue
            for entry in entries:
                rel = f"{folder}/{entry.name}" if folder else entry.name
                try:
                    self._visit(entry, rel, pending, files, warnings)
                except OSError as e:
                    warnings.append(f"{rel}: skipped: {e.strerror or e}")
        return SourceScan(files=dict(sorted(files.items())), warnings=tuple(warnings))

    def _visit(self, entry: os.DirEntry, rel: str, pending: list[str],
               files: dict[str, SourceFile], warnings: list[str]) -> None:
        if entry.name.startswith("."):
            return  # hidden folders (.git, .obsidian, .trash, .ai-memory) and files
        is_md = entry.name.lower().endswith(".md")
        if entry.is_symlink():
            real = os.path.realpath(entry.path)
            if not os.path.exists(real):
                if is_md:
                    warnings.append(f"{rel}: skipped, broken symlink")
                return
            if (is_md or os.path.isdir(real)) and not self._inside(real):
                warnings.append(f"{rel}: skipped, symlink points outside the memory root")
                return
            if os.path.isdir(real):
                return  # its target inside the root is scanned where it lives; no loops
        elif entry.is_dir(follow_symlinks=False):
            pending.append(rel)
            return
        if not is_md or not entry.is_file():
            return
        info = entry.stat()
        if info.st_size > self._max_file_bytes:
            warnings.append(f"{rel}: skipped, {info.st_size} bytes is over the "
                            f"{self._max_file_bytes}-byte limit")
            return
        files[rel] = SourceFile(path=rel, size=info.st_size, mtime_ns=info.st_mtime_ns)

    # -- load ---------------------------------------------------------------------------

    def load(self, path: str) -> NoteDocument:
        rel = note_path(path)
        real = os.path.realpath(os.path.join(self._root, *rel.split("/")))
        if not self._inside(real):
            raise InvalidRequest(f"{rel}: resolves outside the memory root")
        raw = self._read(rel, real)
        if b"\x00" in raw:
            raise InvalidRequest(f"{rel}: binary file (NUL bytes), not a Markdown note")
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as e:
            raise InvalidRequest(f"{rel}: not valid UTF-8 (byte {e.start})") from None
        return self._parse(rel, text, hashlib.sha256(raw).hexdigest())

    def _read(self, rel: str, real: str) -> bytes:
        try:
            info = os.stat(real)
            if not stat.S_ISREG(info.st_mode):
                raise NotFound(f"{rel}: not a file")
            if info.st_size > self._max_file_bytes:
                raise InvalidRequest(f"{rel}: {info.st_size} bytes is over the "
                                     f"{self._max_file_bytes}-byte limit")
            with open(real, "rb") as handle:
                raw = handle.read(self._max_file_bytes + 1)
        except (FileNotFoundError, NotADirectoryError):
            raise NotFound(f"no note at {rel}") from None
        except OSError as e:
            raise InvalidRequest(f"{rel}: cannot be read: {e.strerror or e}") from e
        if len(raw) > self._max_file_bytes:
            raise InvalidRequest(f"{rel}: over the {self._max_file_bytes}-byte limit")
        return raw

    def _front_matter(self, rel: str, yaml_text: str | None, warnings: list[str]) -> dict:
        if yaml_text is None:
            return {}
        reason = None
        if len(yaml_text.encode("utf-8")) > self._max_front_matter_bytes:
            reason = f"over {self._max_front_matter_bytes} bytes"
        else:
            try:
                data = yaml.load(yaml_text, Loader=_NoAliasLoader)  # noqa: S506 (safe loader)
            except YAML_ERRORS as e:
                data, reason = None, _yaml_reason(e)
            if data is not None and not isinstance(data, dict):
                reason = f"expected a mapping, got {type(data).__name__}"
        if reason:
            warnings.append(f"{rel}: front matter ignored: {reason}")
            return {}
        return data or {}

    def _parse(self, rel: str, text: str, digest: str) -> NoteDocument:
        warnings: list[str] = []
        lines = split_lines(text)
        yaml_text, body_start = split_front_matter(text)
        data = self._front_matter(rel, yaml_text, warnings)
        fields = _Fields(data, rel, warnings)
        scope = _declared_scope(fields, scope_from_path(rel))
        title = fields.text("title") or first_heading(lines, body_start=body_start) \
            or PurePosixPath(rel).name[:-3]
        memory_id = fields.text("memory_id") or rel[:-3].lower()
        date = fields.text("date")
        created = fields.text("created") or date
        related = fields.values("related")
        note = Note(
            memory_id=memory_id, path=rel, title=title, type=fields.text("type") or "memory",
            root_scope=(fields.text("root_scope") or "work").lower(),
            scope_kind=scope["scope_kind"], scope_id=scope["scope_id"],
            repository=scope["repository"], project=scope["project"], ticket=scope["ticket"],
            status=_status(fields), created=created, updated=fields.text("updated"),
            review_after=fields.text("review_after"), related=related,
            related_repos=fields.values("related_repos"),
            related_projects=fields.values("related_projects"),
            supersedes=fields.values("supersedes"), superseded_by=fields.values("superseded_by"),
            tags=fields.values("tags"), aliases=fields.values("aliases"),
            links=tuple(dict.fromkeys((*extract_links(lines[body_start - 1:]), *related))),
            content_hash=digest, line_count=len(lines))
        chunks = chunk_lines(lines, memory_id=memory_id, path=rel, title=title,
                             date=date or created, window=self._window,
                             overlap=self._overlap, body_start=body_start,
                             ticket=note.ticket)
        return NoteDocument(note=note, chunks=chunks, lines=tuple(lines),
                            front_matter=_plain(data), warnings=tuple(warnings))
