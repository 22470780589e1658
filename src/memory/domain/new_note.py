"""A note an agent writes: its front matter in the root's schema, then the given body."""

from __future__ import annotations

import datetime as dt

from attrs import frozen

from memory.domain.markdown import split_front_matter
from memory.domain.errors import InvalidRequest
from memory.domain.front_matter_yaml import FieldValue, render_block
from memory.domain.note_text import NoteText, single_line
from memory.domain.notes import Status
from memory.domain.placement import WriteScope

MAX_CLIENT_CHARS = 100


@frozen(kw_only=True)
class Author:
    """Who asked for a write: the MCP client (clientInfo name), or the CLI."""

    name: str
    source: str = "ai-session"  # provenance.source: how the knowledge arrived

    @classmethod
    def named(cls, name: object, *, source: str = "ai-session") -> Author:
        """A client name as written into notes and commits; unnamed clients say so."""
        try:
            text = single_line(name, "client name", MAX_CLIENT_CHARS)
        except InvalidRequest:
            text = "unnamed-client"
        return cls(name=text, source=source)


@frozen(kw_only=True)
class NewNote:
    """Everything a write decided but the file name: identity, fields and body."""

    memory_id: str
    title: str
    body: tuple[str, ...]
    scope: WriteScope | None
    author: Author
    today: dt.date
    note_type: str = "memory"
    status: Status = Status.ACTIVE
    tags: tuple[str, ...] = ()
    related: tuple[str, ...] = ()  # memory_ids
    supersedes: tuple[str, ...] = ()  # memory_ids

    def fields(self) -> list[tuple[str, FieldValue]]:
        fields: list[tuple[str, FieldValue]] = [
            ("memory_id", self.memory_id), ("title", self.title), ("type", self.note_type)]
        if self.scope is not None:
            fields.append(("primary_scope", self.scope.primary_scope))
        fields += [("status", self.status.value), ("created", self.today),
                   ("updated", self.today)]
        optional = (("tags", self.tags), ("related", tuple(f"[[{r}]]" for r in self.related)),
                    ("supersedes", self.supersedes))
        fields += [(name, value) for name, value in optional if value]
        fields.append(("provenance", {"source": self.author.source, "agent": self.author.name}))
        return fields

    def text(self) -> NoteText:
        lines = (*render_block(self.fields()), "", *self.body)
        return NoteText.of("\n".join(lines) + "\n")


def body_lines(lines: tuple[str, ...]) -> tuple[str, ...]:
    """A new note's body: not blank, and not a second front matter block."""
    if not any(line.strip() for line in lines):
        raise InvalidRequest("body must not be empty")
    if split_front_matter("\n".join(lines))[0] is not None:
        raise InvalidRequest("body starts with a front matter block: pass title, tags, status "
                             "and the rest as arguments, and only Markdown as the body")
    return lines
