"""Which repository, project or ticket a note belongs to: its folder, or what it declares."""

from __future__ import annotations

import re
from collections.abc import Sequence

from attrs import evolve, frozen

from memory.domain.notes import ScopeKind

TICKET_STEM = re.compile(r"^[A-Za-z][A-Za-z0-9]{1,14}-\d{1,7}$")
CROSS_CUTTING = {
    "decisions": ScopeKind.DECISION, "tools": ScopeKind.TOOL, "workflows": ScopeKind.REFERENCE,
    "references": ScopeKind.REFERENCE, "people": ScopeKind.PERSON, "areas": ScopeKind.AREA,
}
# The folders as they are written, for every text that lists them (docs, the welcome note).
CROSS_CUTTING_FOLDERS = tuple(f"{name.capitalize()}/" for name in CROSS_CUTTING)
_OWNER_FIELD = {ScopeKind.REPO: "repository", ScopeKind.PROJECT: "project",
                ScopeKind.TICKET: "ticket"}


@frozen(kw_only=True)
class NoteScope:
    """A note's primary scope and the owners it belongs to (keys lower-case, tickets upper)."""

    kind: ScopeKind | None = None
    id: str | None = None
    repository: str | None = None
    project: str | None = None
    ticket: str | None = None


def _ticket_in(parts: Sequence[str]) -> str | None:
    """`Tickets/<ID>/...` (or `Tickets/<ID>.md`) among the parts after the owner's key."""
    for i, part in enumerate(parts[:-1]):
        if part.lower() != "tickets":
            continue
        if i + 2 < len(parts):
            return parts[i + 1].upper()
        stem = parts[-1].rsplit(".", 1)[0]
        if TICKET_STEM.match(stem):
            return stem.upper()
    return None


def scope_from_path(path: str) -> NoteScope:
    """Scope a note's folder implies.

    `Repos/<key>/`, `Projects/<key>/` and the cross-cutting folders (Decisions, Tools, ...)
    are matched case-insensitively; the first such folder on the path decides.
    """
    parts = [p for p in path.replace("\\", "/").split("/") if p and p != "."]
    dirs, owner_end, scope = parts[:-1], 0, NoteScope()
    for i, part in enumerate(dirs):
        key = part.lower()
        if key in ("repos", "repositories", "projects") and i + 1 < len(dirs):
            kind = ScopeKind.PROJECT if key == "projects" else ScopeKind.REPO
            owner = dirs[i + 1].lower()
            scope = NoteScope(kind=kind, id=owner, **{_OWNER_FIELD[kind]: owner})
            owner_end = i + 2
            break
        if key in CROSS_CUTTING:
            return NoteScope(kind=CROSS_CUTTING[key])
    ticket = _ticket_in(parts[owner_end:])
    if ticket:
        scope = evolve(scope, ticket=ticket, kind=ScopeKind.TICKET, id=ticket)
    return scope


def declared_scope(kind_text: str, ident: str | None,
                   folder: NoteScope) -> tuple[NoteScope, str | None]:
    """`primary_scope: {kind, id}` read over the folder's scope (the id may be left to the
    folder); the folder's scope and why when the declaration cannot be used."""
    kind = ScopeKind.parse(kind_text)
    if kind is None:
        return folder, f"unknown kind {kind_text!r}"
    owner = _OWNER_FIELD.get(kind)
    if owner is None:
        return NoteScope(kind=kind, id=ident), None
    key = ident or getattr(folder, owner)
    if not key:
        return folder, f"kind {kind.value} needs an id"
    key = key.upper() if kind is ScopeKind.TICKET else key.lower()
    scope = NoteScope(kind=kind, id=key, **{owner: key})
    if kind is ScopeKind.TICKET:  # a ticket lives inside the repo/project of its folder
        scope = evolve(scope, repository=folder.repository, project=folder.project)
    return scope, None
