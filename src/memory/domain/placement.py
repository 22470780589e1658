"""Where a new note goes and what it is called: the root's folder conventions and memory_ids."""

from __future__ import annotations

import re
from collections.abc import Container
from typing import Any
from enum import Enum

from attrs import frozen

from memory.domain.note_scope import CROSS_CUTTING, scope_from_path
from memory.domain.errors import InvalidRequest
from memory.domain.file_names import component_problem, note_file_name, slug
from memory.domain.notes import Note, ScopeKind
from memory.domain.scope import TICKET_ID, ScopeFilter, StatusFilter

KEY = re.compile(r"[a-z0-9][a-z0-9._\-]{0,99}")
MAX_MEMORY_ID_CHARS = 120


class CaptureKind(str, Enum):
    """Cross-cutting scopes a note may be written in, each with its own top folder."""

    DECISION = "decision"
    TOOL = "tool"
    WORKFLOW = "workflow"
    REFERENCE = "reference"
    PERSON = "person"
    AREA = "area"

    @property
    def folder(self) -> str:
        return {"person": "People"}.get(self.value, f"{self.value.capitalize()}s")

    @classmethod
    def parse(cls, value: Any) -> CaptureKind:
        try:
            return cls(value.strip().lower())
        except (AttributeError, ValueError):
            allowed = ", ".join(k.value for k in cls)
            raise InvalidRequest(f"kind must be one of {allowed}, not {value!r}") from None


@frozen(kw_only=True)
class ScopeKey:
    """The scope a note belongs to, as the index reads it from path and front matter."""

    kind: ScopeKind | None = None
    repository: str | None = None
    project: str | None = None
    ticket: str | None = None

    @classmethod
    def of_note(cls, note: Note) -> ScopeKey:
        return cls(kind=note.scope_kind, repository=note.repository, project=note.project,
                   ticket=note.ticket)

    @classmethod
    def of_path(cls, path: str) -> ScopeKey:
        found = scope_from_path(path)
        return cls(kind=found.kind, repository=found.repository, project=found.project,
                   ticket=found.ticket)

    def search_filter(self, folder: str | None = None) -> ScopeFilter:
        """The search filter of this scope; cross-cutting notes are told apart by folder."""
        return ScopeFilter(repository=self.repository, project=self.project,
                           ticket=self.ticket, status=StatusFilter.ANY, path_prefix=folder)


def scope_key(value: object, field: str) -> str:
    """A repository or project key: lower case, one folder name."""
    text = value.strip().lower() if isinstance(value, str) else None
    if not text or not KEY.fullmatch(text) or component_problem(text):
        raise InvalidRequest(f"{field} must be a short key of letters, digits, '.', '_' or "
                             f"'-' (like payments-api), not {value!r}")
    return text


def _ticket(value: object) -> str:
    text = value.strip().upper() if isinstance(value, str) else ""
    if not TICKET_ID.fullmatch(text):
        raise InvalidRequest(f"ticket must be a tracker id like PAY-1234, not {value!r}")
    return text


def _given(value: object) -> bool:
    return value is not None and value != ""


@frozen(kw_only=True)
class WriteScope:
    """The one scope a write names: a repository, a ticket in it, a project, or a kind."""

    repository: str | None = None
    project: str | None = None
    ticket: str | None = None
    kind: CaptureKind | None = None

    @classmethod
    def parse(cls, *, repository: object = None, project: object = None, ticket: object = None,
              kind: object = None) -> WriteScope | None:
        """None when no scope is named; InvalidRequest for a mix or a ticket alone."""
        if _given(ticket) and not _given(repository):
            raise InvalidRequest("a ticket note needs its repository: ticket notes live in "
                                 "Repos/<repository>/Tickets/<ticket>/Notes/")
        named = [n for n, v in (("repository", repository), ("project", project),
                                ("kind", kind)) if _given(v)]
        if len(named) > 1:
            raise InvalidRequest(f"name one scope, not {' and '.join(named)}: a note has one "
                                 "primary scope (related_repos can point at others)")
        if not named:
            return None
        return cls(repository=scope_key(repository, "repository") if _given(repository) else None,
                   project=scope_key(project, "project") if _given(project) else None,
                   ticket=_ticket(ticket) if _given(ticket) else None,
                   kind=CaptureKind.parse(kind) if _given(kind) else None)

    @property
    def folder(self) -> str:
        """The folder the root's conventions give this scope's notes."""
        if self.kind is not None:
            return self.kind.folder
        if self.ticket:
            return f"Repos/{self.repository}/Tickets/{self.ticket}/Notes"
        if self.repository:
            return f"Repos/{self.repository}/Notes"
        return f"Projects/{self.project}/Notes"

    @property
    def key(self) -> ScopeKey:
        if self.kind is not None:
            return ScopeKey(kind=CROSS_CUTTING[self.kind.folder.lower()])
        if self.ticket:
            return ScopeKey(kind=ScopeKind.TICKET, repository=self.repository,
                            ticket=self.ticket)
        if self.repository:
            return ScopeKey(kind=ScopeKind.REPO, repository=self.repository)
        return ScopeKey(kind=ScopeKind.PROJECT, project=self.project)

    @property
    def primary_scope(self) -> dict[str, str]:
        """The front matter `primary_scope` the parser reads back as this same scope."""
        key = self.key
        ident = key.ticket or key.repository or key.project
        assert key.kind is not None  # every key a WriteScope makes names its kind
        return {"kind": key.kind.value, "id": ident} if ident else {"kind": key.kind.value}

    def place(self, title: str, number: int = 1) -> str:
        """The note's path; `number` > 1 when an earlier name is taken by another note."""
        return f"{self.folder}/{note_file_name(title, number)}"


def _id_prefix(scope: ScopeKey) -> str:
    if scope.ticket:
        return scope.ticket.lower()
    return scope.repository or scope.project or (scope.kind.value if scope.kind else "")


def derive_memory_id(title: str, scope: ScopeKey, taken: Container[str]) -> str:
    """`<scope key>-<title words>`, lower case, with `-2`, `-3`... if already taken."""
    prefix = _id_prefix(scope)
    words = slug(title, MAX_MEMORY_ID_CHARS - len(prefix) - 4) or "note"
    named = not prefix or words == prefix or words.startswith(f"{prefix}-")
    base = words if named else f"{prefix}-{words}"
    candidate, number = base, 1
    while candidate in taken:
        number += 1
        candidate = f"{base}-{number}"
    return candidate
