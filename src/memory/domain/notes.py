"""Notes and chunks: the canonical Markdown memory as immutable values."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from enum import Enum
from typing import Any

from attrs import field, frozen

from memory.domain.errors import InvalidRequest

_DRIVE = re.compile(r"^[A-Za-z]:")
MARKDOWN_EXTENSION = ".md"


def is_markdown(name: str) -> bool:
    """The file name or path ends in the Markdown extension, spelled in any case (`.MD`)."""
    return name.lower().endswith(MARKDOWN_EXTENSION)


def without_extension(path: str) -> str:
    """A file name or path without its Markdown extension, in whatever case it is spelled."""
    return path[:-len(MARKDOWN_EXTENSION)] if is_markdown(path) else path


def note_path(path: str) -> str:
    """A note path as the index knows it (relative, `/`-separated); anything that could
    reach outside the root, a hidden file or folder, or a non-Markdown file is refused."""
    if not isinstance(path, str) or not path or "\x00" in path:
        raise InvalidRequest("a note path must be a non-empty relative path")
    text = path.replace("\\", "/")
    if text.startswith(("/", "~")) or _DRIVE.match(text):
        raise InvalidRequest(f"note path must be relative to the memory root: {path!r}")
    parts = [p for p in text.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise InvalidRequest(f"note path must stay inside the memory root: {path!r}")
    if not parts or any(p.startswith(".") for p in parts):
        raise InvalidRequest(f"not an indexable note (hidden folder or file): {path!r}")
    if not is_markdown(parts[-1]):
        raise InvalidRequest(f"not a Markdown note: {path!r}")
    return "/".join(parts)


class ScopeKind(str, Enum):
    REPO = "repo"
    TICKET = "ticket"
    PROJECT = "project"
    AREA = "area"
    TOOL = "tool"
    PERSON = "person"
    DECISION = "decision"
    REFERENCE = "reference"

    @classmethod
    def parse(cls, value: str) -> ScopeKind | None:
        """Read a front-matter kind; `repository` is an accepted spelling of `repo`."""
        text = (value or "").strip().lower()
        if text in ("repository", "repositories", "repos"):
            text = "repo"
        try:
            return cls(text)
        except ValueError:
            return None


class Status(str, Enum):
    ACTIVE = "active"
    NEEDS_REVIEW = "needs-review"
    SUPERSEDED = "superseded"
    ARCHIVED = "archived"

    @classmethod
    def parse(cls, value: str | None) -> Status:
        text = (value or "").strip().lower().replace("_", "-")
        for status in cls:
            if status.value == text:
                return status
        return cls.ACTIVE

    @property
    def is_current(self) -> bool:
        return self in (Status.ACTIVE, Status.NEEDS_REVIEW)


def content_hash(text: str) -> str:
    """Stable identity of a piece of text: sha256 of its UTF-8 bytes, hex."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _lower_tuple(values: Iterable[str | None]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(v.strip().lower() for v in values if v and v.strip()))


@frozen(kw_only=True)
class Note:
    """One Markdown file of the memory root and what its front matter and path say."""

    memory_id: str
    path: str  # relative to the root, forward slashes
    title: str
    type: str = "memory"
    root_scope: str = "work"
    scope_kind: ScopeKind | None = None
    scope_id: str | None = None
    repository: str | None = None  # lower-case key
    project: str | None = None
    ticket: str | None = None  # upper-case id
    status: Status = Status.ACTIVE
    created: str | None = None
    updated: str | None = None
    review_after: str | None = None
    related: tuple[str, ...] = ()
    related_repos: tuple[str, ...] = field(default=(), converter=_lower_tuple)
    related_projects: tuple[str, ...] = field(default=(), converter=_lower_tuple)
    supersedes: tuple[str, ...] = ()
    superseded_by: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    links: tuple[str, ...] = ()  # link targets written in the body (wikilinks, md links)
    content_hash: str = ""
    line_count: int = 0

    @property
    def effective_status(self) -> Status:
        """A note someone marked as superseded counts as superseded even if status lags."""
        if self.superseded_by and self.status is Status.ACTIVE:
            return Status.SUPERSEDED
        return self.status

    @property
    def repositories(self) -> frozenset[str]:
        keys = set(self.related_repos)
        if self.repository:
            keys.add(self.repository)
        return frozenset(keys)

    @property
    def projects(self) -> frozenset[str]:
        keys = set(self.related_projects)
        if self.project:
            keys.add(self.project)
        return frozenset(keys)

    @property
    def is_cross_cutting(self) -> bool:
        """Notes owned by no repository, project or ticket apply everywhere."""
        return not (self.repository or self.project or self.ticket or self.related_repos
                    or self.related_projects)

    @property
    def names(self) -> tuple[str, ...]:
        """Every way a person may name this note: id, title, aliases, path, file stem."""
        stem = without_extension(self.path.rsplit("/", 1)[-1])
        return tuple(dict.fromkeys(
            n for n in (self.memory_id, self.title, *self.aliases, self.path, stem) if n))


@frozen(kw_only=True)
class Chunk:
    """A span of one note's lines, the unit that is indexed and cited."""

    chunk_id: str
    memory_id: str
    path: str
    heading: str  # heading path, " > " separated; "" before the first heading
    start_line: int  # 1-based, inclusive
    end_line: int
    text: str  # exactly the file's lines start_line..end_line
    context: str = ""  # title, heading and date prepended when indexing
    ordinal: int = 0  # position within the note
    hash: str = ""

    @classmethod
    def create(cls, *, memory_id: str, path: str, heading: str, start_line: int,
               end_line: int, text: str, context: str = "", ordinal: int = 0) -> Chunk:
        if start_line < 1 or end_line < start_line:
            raise ValueError(f"bad line span {start_line}-{end_line} in {path}")
        digest = content_hash(f"{context}\n{text}")
        return cls(chunk_id=f"{memory_id}#{ordinal}", memory_id=memory_id, path=path,
                   heading=heading, start_line=start_line, end_line=end_line, text=text,
                   context=context, ordinal=ordinal, hash=digest)

    @property
    def indexed_text(self) -> str:
        """What lexical and semantic indexes see: the note's context, then the lines."""
        return f"{self.context}\n{self.text}" if self.context else self.text


@frozen(kw_only=True)
class NoteDocument:
    """A parsed note: its metadata, its chunks, its raw lines and any warnings.

    `warnings` go with every read of the note; `notices` are said once, when a refresh
    indexes it (a local development credential: nothing a reader of the note must be told).
    """

    note: Note
    chunks: tuple[Chunk, ...]
    lines: tuple[str, ...] = ()
    front_matter: dict[str, Any] = field(factory=dict, eq=False)
    warnings: tuple[str, ...] = ()
    notices: tuple[str, ...] = ()
