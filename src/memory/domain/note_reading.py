"""Building a note from its file's lines and its loaded front matter.

Secret values are replaced first, so nothing derived from the note (its chunks, title,
names, links, the lines the index keeps, the graph) ever holds one; the file itself is the
user's and is never rewritten.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from memory.domain.chunking import chunk_lines
from memory.domain.dev_credentials import ALLOW, allows_dev_credentials
from memory.domain.identity import declared_identity, path_identity
from memory.domain.markdown import first_heading, front_matter_lines, links
from memory.domain.note_fields import FrontMatterFields
from memory.domain.note_scope import scope_from_path
from memory.domain.notes import Note, NoteDocument
from memory.domain.secrets import SecretFinding, redact_data, redact_lines


def read_note(path: str, lines: Sequence[str], front_matter: Mapping[str, Any] | None, *,
              content_hash: str, warnings: Sequence[str] = (), window: int = 8,
              overlap: int = 2) -> NoteDocument:
    """The note a file holds: `path` relative to the root, `lines` as split_lines gives
    them, `front_matter` the loaded YAML block (None when absent or refused)."""
    clean, findings = redact_lines(lines)
    data = redact_data(dict(front_matter or {}))
    _, body_start = front_matter_lines(clean)
    fields = FrontMatterFields(data, path)
    date = fields.text("date")
    note = _note(path, clean, body_start, fields, content_hash, date)
    chunks = chunk_lines(clean, memory_id=note.memory_id, path=path, title=note.title,
                         date=date or note.created, window=window, overlap=overlap,
                         body_start=body_start, ticket=note.ticket)
    notes = [*warnings, *fields.warnings, *_secret_warning(path, findings)]
    allowed = allows_dev_credentials((front_matter or {}).get("secrets"))
    return NoteDocument(note=note, chunks=chunks, lines=clean, front_matter=data,
                        warnings=tuple(notes),
                        notices=() if allowed else _dev_credential_notice(path, findings))


def _note(path: str, lines: tuple[str, ...], body_start: int, fields: FrontMatterFields,
          content_hash: str, date: str | None) -> Note:
    scope = fields.scope(scope_from_path(path))
    title = fields.text("title") or first_heading(lines, body_start=body_start) \
        or path.rsplit("/", 1)[-1][:-3]
    related = fields.values("related")
    body_links = tuple(link.target for link in links(lines, body_start))
    return Note(
        memory_id=_memory_id(path, fields), path=path, title=title,
        type=fields.text("type") or "memory",
        root_scope=(fields.text("root_scope") or "work").lower(),
        scope_kind=scope.kind, scope_id=scope.id, repository=scope.repository,
        project=scope.project, ticket=scope.ticket, status=fields.status(),
        created=fields.text("created") or date,
        updated=fields.text("updated"), review_after=fields.text("review_after"),
        related=related, related_repos=fields.values("related_repos"),
        related_projects=fields.values("related_projects"),
        supersedes=fields.values("supersedes"), superseded_by=fields.values("superseded_by"),
        tags=fields.values("tags"), aliases=fields.values("aliases"),
        links=tuple(dict.fromkeys((*body_links, *related))),
        content_hash=content_hash, line_count=len(lines))


def _memory_id(path: str, fields: FrontMatterFields) -> str:
    declared, refused = declared_identity(fields.text("memory_id"))
    if refused:
        fields.warn("memory_id", f"{refused}; the note is known by its path")
    return declared or path_identity(path)


def _secret_warning(path: str, findings: Sequence[SecretFinding]) -> list[str]:
    """Where secrets were kept out of the index, never what they were; development
    credentials are hidden as well but left to `_dev_credential_notice`."""
    real = [f for f in findings if not f.local_dev]
    if not real:
        return []
    kinds = ", ".join(sorted({f.kind for f in real}))
    return [f"{path}: secret-shaped text on line(s) {_shown_lines(real)} ({kinds}) is "
            "replaced by a marker in everything derived from the note"]


def _dev_credential_notice(path: str, findings: Sequence[SecretFinding]) -> tuple[str, ...]:
    dev = [f for f in findings if f.local_dev]
    if not dev:
        return ()
    return (f"{path}: line(s) {_shown_lines(dev)} hold a local development credential (a "
            "well-known password for a local host), hidden like any secret; add "
            f"`secrets: {ALLOW}` to the note's front matter to stop this notice",)


def _shown_lines(findings: Sequence[SecretFinding]) -> str:
    lines = sorted({f.line for f in findings})
    return ", ".join(map(str, lines[:10])) + (" ..." if len(lines) > 10 else "")
