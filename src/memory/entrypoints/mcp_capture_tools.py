"""The write tools, memory_write and memory_edit: arguments in, one CaptureService call, the
written note's hash and citations out. Left out of a read-only server."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ToolAnnotations
from pydantic import Field

from memory.application.capture.requests import (EditRequest, EditResult, WriteRequest,
                                                 WriteResult)
from memory.application.search.requests import MAX_NAME_CHARS
from memory.domain.new_note import MAX_CLIENT_CHARS, Author
from memory.domain.note_edits import MAX_NOTE_BYTES
from memory.domain.write_receipts import FULL_HASH_CHARS, MIN_PREFIX_CHARS
from memory.domain.settable_fields import (MAX_IDENTITY_CHARS, MAX_ITEM_CHARS, MAX_ITEMS,
                                           MAX_TITLE_CHARS, SETTABLE)
from memory.entrypoints import capture_presenters
from memory.entrypoints.mcp_tools import _returns, add_tools, answer

if TYPE_CHECKING:
    from memory.application.capture.service import CaptureService

T = TypeVar("T")
MAX_SCOPE_KEY_CHARS = 100  # placement.KEY: the longest repository or project key a note takes
MAX_HEADING_CHARS = 300

Title = Annotated[str, Field(
    min_length=1, max_length=MAX_TITLE_CHARS,
    description="The note's title, one line; the file name is made from it.")]
Body = Annotated[str, Field(
    min_length=1, max_length=MAX_NOTE_BYTES,
    description="The note's Markdown, without front matter (the server writes it from the "
                "other arguments). At most 256 KB; never a secret's value: write where the "
                "secret lives (vault path, variable name) instead.")]
Repository = Annotated[str | None, Field(
    max_length=MAX_SCOPE_KEY_CHARS,
    description="The repository the note is about (e.g. payments-api): it goes to "
                "Repos/<repository>/Notes/. With ticket, to that ticket's folder.")]
Project = Annotated[str | None, Field(
    max_length=MAX_SCOPE_KEY_CHARS, description="The project the note is about: Projects/<key>/Notes/.")]
Ticket = Annotated[str | None, Field(
    max_length=30, description="A ticket id like PAY-1234, given with its repository: "
                               "Repos/<repository>/Tickets/<ID>/Notes/.")]
Kind = Annotated[Literal["decision", "tool", "workflow", "reference", "person", "area"] | None,
                 Field(description="A cross-cutting note, in its own top folder (Decisions/, "
                                   "Tools/, Workflows/, References/, People/, Areas/).")]
Tags = Annotated[list[Annotated[str, Field(max_length=MAX_ITEM_CHARS)]] | None, Field(
    max_length=MAX_ITEMS, description="Tags, without '#' or commas.")]
Related = Annotated[list[Annotated[str, Field(max_length=MAX_IDENTITY_CHARS)]] | None, Field(
    max_length=MAX_ITEMS,
    description="Existing notes this one relates to (memory_id, path or title); each must exist.")]
Status = Annotated[Literal["active", "needs-review", "superseded", "archived"] | None, Field(
    description="The note's status; active when not given.")]
Supersedes = Annotated[str | None, Field(
    max_length=MAX_NAME_CHARS,
    description="An existing note this one replaces (memory_id, path or title): it is marked "
                "superseded, with superseded_by naming the new note, in the same call.")]
WritePath = Annotated[str | None, Field(
    max_length=MAX_NAME_CHARS,
    description="An explicit path relative to the memory root, ending in .md, instead of the "
                "folder the scope gives. Never over an existing file.")]
AllowDuplicate = Annotated[bool, Field(
    description="Write even when the scope already holds a note on the same subject (the "
                "refusal lists them). Prefer memory_edit on the existing note.")]

Identity = Annotated[str, Field(
    min_length=1, max_length=MAX_NAME_CHARS,
    description="The note to edit: its memory_id, path relative to the memory root, or title.")]
ContentHash = Annotated[str, Field(
    min_length=MIN_PREFIX_CHARS, max_length=FULL_HASH_CHARS,
    description="The note's content_hash as memory_get (or the last memory_write or "
                "memory_edit) returned it: all 64 hex characters, or its first 12 or more. If "
                "the note changed since, nothing is written and the error gives the current "
                "hash (and says when your own earlier edit is what changed it): read the note "
                "again, then redo the edit.")]
Operation = Annotated[Literal["append", "replace_lines", "set_fields", "supersede", "archive",
                              "move"], Field(
    description="append: add text at the end, or at the end of the section under heading "
                "(made if missing). replace_lines: lines start_line..end_line become text "
                "(empty text removes them). set_fields: change front matter fields. "
                "supersede: mark the note replaced by superseded_by. archive: status archived. "
                "move: to new_path, memory_id kept.")]
Text = Annotated[str, Field(
    max_length=MAX_NOTE_BYTES,
    description="append and replace_lines: the Markdown text to add or put in place.")]
Heading = Annotated[str, Field(
    max_length=MAX_HEADING_CHARS,
    description="append: the heading to append under, e.g. '## Gotchas' or 'Gotchas'.")]
Line = Annotated[int | None, Field(
    ge=1, le=10**9, description="replace_lines: a 1-based line number of the file (inclusive), "
                                "as memory_get numbers them.")]
Fields = Annotated[dict[str, Any] | None, Field(
    max_length=len(SETTABLE),
    description=f"set_fields: front matter fields to set, null removes one. Settable: "
                f"{', '.join(SETTABLE)}. related, supersedes and superseded_by name existing "
                "notes.",
    json_schema_extra={"propertyNames": {"enum": list(SETTABLE)}})]
SupersededBy = Annotated[str | None, Field(
    max_length=MAX_NAME_CHARS,
    description="supersede: the existing note that replaces this one.")]
NewPath = Annotated[str | None, Field(
    max_length=MAX_NAME_CHARS,
    description="move: the new path relative to the memory root, ending in .md.")]

Written = _returns(WriteResult)
Edited = _returns(EditResult)
WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False,
                        open_world_hint=False)
ANNOTATIONS = {
    "memory_write": WRITE.model_copy(update={"title": "Save a new note"}),
    "memory_edit": WRITE.model_copy(update={"title": "Change a note"}),
}


def author(ctx: Context) -> Author:
    """The MCP client that asked, by the name it gave in initialize (clientInfo)."""
    params = ctx.session.client_params
    info = params.client_info if params is not None else None
    return Author.named(info.name[:MAX_CLIENT_CHARS] if info is not None else None)


class CaptureTools:
    """Thin handlers: the schema parses, the request parses, one call runs in a thread."""

    def __init__(self, capture: Callable[[], CaptureService]):
        self._capture = capture

    async def _call(self, use: Callable[[CaptureService], T]) -> T:
        return await anyio.to_thread.run_sync(lambda: use(self._capture()))

    async def memory_write(self, ctx: Context, title: Title, body: Body,
                           repository: Repository = None, project: Project = None,
                           ticket: Ticket = None, kind: Kind = None, tags: Tags = None,
                           related: Related = None, status: Status = None,
                           supersedes: Supersedes = None, path: WritePath = None,
                           allow_duplicate: AllowDuplicate = False) -> Written:
        """Save NEW knowledge as a note in long-term memory. memory_search the scope first:
        if a note on the subject exists, change that one with memory_edit instead. Name one
        scope (repository, project, ticket with its repository, or kind) or an explicit
        path; the server places the note by the root's conventions, writes its front matter
        (memory_id, title, scope, status, dates, tags, provenance naming you) and never
        overwrites a file. A note on the same subject in the same scope (same title, or
        very similar text) is refused with those notes listed, unless allow_duplicate.
        Refused, with nothing written: a secret's value, unknown notes in related or
        supersedes, bad names or paths, over 256 KB. The note is indexed before the call
        returns: the next memory_search finds it. Returns path, memory_id, content_hash
        (for a later memory_edit) and the note's evidence citations."""
        who = author(ctx)
        result = await self._call(lambda c: c.write(WriteRequest.parse(
            title=title, body=body, repository=repository, project=project, ticket=ticket,
            kind=kind, tags=tags, related=related, status=status, supersedes=supersedes,
            path=path, allow_duplicate=allow_duplicate), who))
        return answer(result, capture_presenters.write_text(result))

    async def memory_edit(self, ctx: Context, identity: Identity, content_hash: ContentHash,
                          operation: Operation, text: Text = "", heading: Heading = "",
                          start_line: Line = None, end_line: Line = None, fields: Fields = None,
                          superseded_by: SupersededBy = None,
                          new_path: NewPath = None) -> Edited:
        """Change an EXISTING note: memory_get it first and pass the content_hash it
        returned, with one operation (append, replace_lines, set_fields, supersede, archive,
        move) and only that operation's arguments. If anyone (a person in an editor,
        another agent) changed the note since you read it, nothing is written and the error
        gives the current content_hash: read the note again and redo the edit on what it
        says now. Nothing is ever deleted: archive or supersede instead. Text holding a
        secret's value is refused. The note is indexed before the call returns. Returns the
        new content_hash, for the next edit."""
        who = author(ctx)
        result = await self._call(lambda c: c.edit(EditRequest.parse(
            identity=identity, content_hash=content_hash, operation=operation,
            text=text or None, heading=heading or None, start_line=start_line,
            end_line=end_line, fields=fields, superseded_by=superseded_by,
            new_path=new_path), who))
        return answer(result, capture_presenters.edit_text(result))


def register_capture_tools(server: MCPServer, capture: Callable[[], CaptureService]) -> None:
    """Add memory_write and memory_edit; each call asks `capture()` for the CaptureService."""
    add_tools(server, CaptureTools(capture), ANNOTATIONS)
