"""Scope: which notes a search may see, resolved from explicit filters and the query."""

from __future__ import annotations

import re
from collections.abc import Iterable
from difflib import get_close_matches
from enum import Enum
from functools import cached_property

from attrs import evolve, field, frozen

from memory.domain.errors import InvalidRequest
from memory.domain.note_keys import NoteKeys
from memory.domain.notes import Note, Status
from memory.domain.scope_rule import Condition, KeyIs, OwnedBy, PathUnder, StatusIn

# Upper-case project key, dash, number: ALPHA-142, NX-401, PROJ2-7.
TICKET_ID = re.compile(r"\b([A-Z][A-Z0-9]{1,14}-\d{1,7})\b")


class StatusFilter(str, Enum):
    """`active` means current knowledge: active and needs-review notes."""

    ACTIVE = "active"
    NEEDS_REVIEW = "needs-review"
    SUPERSEDED = "superseded"
    ARCHIVED = "archived"
    ANY = "any"

    @classmethod
    def parse(cls, value: str | None) -> StatusFilter:
        if value is None or value == "":
            return cls.ACTIVE
        try:
            return cls(value.strip().lower())
        except ValueError:
            allowed = ", ".join(s.value for s in cls)
            raise InvalidRequest(f"status must be one of {allowed}, not {value!r}") from None

    def admits(self, status: Status) -> bool:
        if self is StatusFilter.ANY:
            return True
        if self is StatusFilter.ACTIVE:
            return status.is_current
        return bool(status.value == self.value)


def ticket_ids_in(text: str) -> tuple[str, ...]:
    """Ticket ids named in free text, in order of first appearance."""
    return tuple(dict.fromkeys(m.group(1) for m in TICKET_ID.finditer(text or "")))


def _key(value: str | None) -> str | None:
    value = (value or "").strip()
    return value.lower() or None


def _ticket_key(value: str | None) -> str | None:
    return (value or "").strip().upper() or None


def _prefix(value: str | None) -> str | None:
    """A folder, matched by whole path segments: `Repos/a` is kept as `Repos/a/`, so that it
    never admits `Repos/a-legacy/`; in this form the prefix needs nothing but `startswith`,
    here and in every store's query."""
    text = (value or "").strip().replace("\\", "/")
    if not text:
        return None
    if text.startswith("/") or text.startswith("~") or re.match(r"^[A-Za-z]:", text) \
            or any(part == ".." for part in text.split("/")):
        raise InvalidRequest(f"path_prefix must be relative to the memory root: {value!r}")
    parts = [part for part in text.split("/") if part not in ("", ".")]
    if not parts:
        return None  # `./`: the whole root
    return "/".join(parts) + "/"


@frozen(kw_only=True)
class ScopeFilter:
    """Hard filters applied before ranking in every provider: nothing outside passes."""

    root_scope: str | None = field(default=None, converter=_key)
    repository: str | None = field(default=None, converter=_key)
    project: str | None = field(default=None, converter=_key)
    ticket: str | None = field(default=None, converter=_ticket_key)
    status: StatusFilter = StatusFilter.ACTIVE
    path_prefix: str | None = field(default=None, converter=_prefix)

    @cached_property
    def conditions(self) -> tuple[Condition, ...]:
        """This filter as the conditions a note's keys must meet (none: it admits all)."""
        found: list[Condition] = []
        if self.root_scope:
            found.append(KeyIs(key="root", value=self.root_scope))
        if self.repository:
            found.append(OwnedBy(key="repositories", value=self.repository))
        if self.project:
            found.append(OwnedBy(key="projects", value=self.project))
        if self.ticket:
            found.append(KeyIs(key="ticket", value=self.ticket))
        if self.path_prefix:
            found.append(PathUnder(prefix=self.path_prefix.lower()))
        admitted = tuple(s for s in Status if self.status.admits(s))
        if len(admitted) < len(Status):
            found.append(StatusIn(statuses=admitted))
        return tuple(found)

    def admits(self, note: Note) -> bool:
        keys = NoteKeys.of(note)
        for condition in self.conditions:
            if not condition.holds(keys):
                return False
        return True

    def excluded_by(self, note: Note) -> str | None:
        """The name of the first filter that leaves `note` out (status last), or None."""
        for name in ("root_scope", "repository", "project", "ticket", "path_prefix"):
            value = getattr(self, name)
            if value and not ScopeFilter(**{name: value, "status": StatusFilter.ANY}).admits(note):
                return name
        return None if self.status.admits(note.effective_status) else "status"

    def exclusion(self, note: Note) -> str | None:
        """Why this filter leaves `note` out, in words, or None."""
        name = self.excluded_by(note)
        if name == "status":
            return (f"status {note.effective_status.value!r} is filtered out by "
                    f"status={self.status.value!r}")
        return None if name is None else f"outside the requested {name} {getattr(self, name)!r}"

    def describe(self) -> dict[str, str]:
        out = {"status": self.status.value}
        for name in ("root_scope", "repository", "project", "ticket", "path_prefix"):
            value = getattr(self, name)
            if value:
                out[name] = value
        return out


@frozen(kw_only=True)
class ResolvedScope:
    """The filter a search runs under, plus what was inferred and from where."""

    filter: ScopeFilter
    query_tickets: tuple[str, ...] = ()  # ticket ids named in the query (ranking hints)
    inferred: tuple[tuple[str, str], ...] = ()  # (field, source) for defaults we guessed


def resolve_scope(query: str, explicit: ScopeFilter,
                  default_repository: tuple[str, str] | None = None) -> ResolvedScope:
    """Combine explicit filters, ticket ids in the query and an inferred repository.

    An explicit argument always wins; a default repository (key, source) applies only
    when the caller gave neither a repository nor a ticket nor a project.
    """
    inferred: list[tuple[str, str]] = []
    flt = explicit
    if default_repository and not (explicit.repository or explicit.ticket or explicit.project):
        key, source = default_repository
        flt = evolve(flt, repository=key)
        inferred.append(("repository", source))
    return ResolvedScope(filter=flt, query_tickets=ticket_ids_in(query), inferred=tuple(inferred))


# The scope fields a note belongs to by name: (filter field, what a note is said to have).
NAMED_FIELDS = ("repository", "project", "ticket")


@frozen(kw_only=True)
class ScopeNames:
    """The repositories, projects and tickets some note of a generation names."""

    repositories: frozenset[str] = frozenset()
    projects: frozenset[str] = frozenset()
    tickets: frozenset[str] = frozenset()

    @classmethod
    def of(cls, notes: Iterable[Note]) -> ScopeNames:
        repositories: set[str] = set()
        projects: set[str] = set()
        tickets: set[str] = set()
        for note in notes:
            repositories |= note.repositories
            projects |= note.projects
            tickets |= {note.ticket.upper()} if note.ticket else set()
        return cls(repositories=frozenset(repositories), projects=frozenset(projects),
                   tickets=frozenset(tickets))

    def tickets_in(self, text: str) -> tuple[str, ...]:
        """The tickets `text` mentions: ids it names that a note owns (by its folder
        `Tickets/<ID>/` or front matter `ticket:`), the tickets `--ticket` finds. An id no
        note owns (ADR-007, a decision's number; ISO-8601) is a mention of no ticket."""
        return tuple(t for t in ticket_ids_in(text) if t in self.tickets)

    def unmatched(self, flt: ScopeFilter) -> tuple[str, ...]:
        """A warning for each repository, project or ticket of `flt` that no note names,
        with the closest names memory knows (a typo, another spelling)."""
        return tuple(self._warning(name, value) for name in NAMED_FIELDS
                     if (value := getattr(flt, name)) and value not in self._known(name))

    def _known(self, name: str) -> frozenset[str]:
        return {"repository": self.repositories, "project": self.projects,
                "ticket": self.tickets}[name]

    def _warning(self, name: str, value: str) -> str:
        known = sorted(self._known(name))
        close = get_close_matches(value, known, n=3, cutoff=0.5)
        if close:
            hint = f"closest: {', '.join(close)}"
        elif known:
            hint = f"memory knows {len(known)}, e.g. {', '.join(known[:5])}"
        else:
            hint = f"no note names any {name}"
        everywhere = "" if name == "ticket" else \
            "; only notes that apply everywhere were searched"
        return f"scope matches no note: no note has {name} {value!r} ({hint}){everywhere}"
