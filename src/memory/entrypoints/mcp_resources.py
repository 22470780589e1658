"""Notes as MCP resources, so a user can @-mention one: listed page by page, read by URI.

`memory://note/{+path}` names a note by its path (each segment percent-encoded, so any file
name round-trips) and `memory://id/{+memory_id}` by its memory_id.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError
from mcp.server.mcpserver.resources import ResourceSecurity
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS, ListResourcesResult, Resource

from memory.domain.errors import AiMemoryError, InvalidRequest, NotFound

if TYPE_CHECKING:
    from memory.application.browse.notes import NoteBrowser, NoteText
    from memory.domain.notes import Note

NOTE_URI = "memory://note/"
NOTE_TEMPLATE = NOTE_URI + "{+path}"
ID_TEMPLATE = "memory://id/{+memory_id}"
MIME = "text/markdown"
# The browser checks paths itself and says why one is refused; the SDK's check only says
# "Unknown resource". A memory_id names nothing on disk.
OWN_CHECKS = ResourceSecurity(exempt_params={"path", "memory_id"})


def note_uri(path: str) -> str:
    """The URI of a note: `%`, spaces, `?`, `#` and non-ASCII escaped, slashes kept."""
    return NOTE_URI + quote(path, safe="/")


class NoteResources:
    """Thin handlers: one NoteBrowser call each, its errors as MCP errors."""

    def __init__(self, browser: Callable[[], NoteBrowser]):
        self._browser = browser

    def by_path(self, path: str) -> str:
        return _read(lambda: self._browser().read_path(path))

    def by_id(self, memory_id: str) -> str:
        return _read(lambda: self._browser().read_id(memory_id))

    async def listing(self, ctx: Any, call_next: Callable) -> Any:
        """Middleware: answers resources/list with a page of notes (the SDK lists no pages)."""
        result = await call_next(ctx)  # the SDK's checks (handshake done, params valid) first
        if ctx.method != "resources/list" or ctx.request_id is None:
            return result
        cursor = (ctx.params or {}).get("cursor")
        try:
            page = await anyio.to_thread.run_sync(lambda: self._browser().page(cursor))
        except InvalidRequest as exc:
            raise MCPError(code=INVALID_PARAMS, message=str(exc)) from exc
        except AiMemoryError as exc:
            raise MCPError(code=INTERNAL_ERROR, message=f"unavailable: {exc}") from exc
        return ListResourcesResult(resources=[_listed(n) for n in page.notes],
                                   next_cursor=page.next_cursor)


def _read(read: Callable[[], NoteText]) -> str:
    # Invalid and missing both answer -32602 (invalid params), as the spec asks of a
    # resource that does not exist; the message says which.
    try:
        return read().text
    except InvalidRequest as exc:
        raise ResourceNotFoundError(f"invalid request: {exc}") from exc
    except NotFound as exc:
        raise ResourceNotFoundError(f"not found: {exc}") from exc
    except AiMemoryError as exc:
        raise ResourceError(f"unavailable: {exc}") from exc


def _listed(note: Note) -> Resource:
    return Resource(uri=note_uri(note.path), name=note.path, title=note.title,
                    description=_description(note), mime_type=MIME)


def _description(note: Note) -> str:
    parts = [f"memory_id {note.memory_id}"]
    parts += [f"{name} {value}" for name, value in (
        ("repository", note.repository), ("project", note.project), ("ticket", note.ticket))
        if value]
    parts.append(note.effective_status.value)
    return "; ".join(parts)


def register_resources(server: MCPServer, browser: Callable[[], NoteBrowser]) -> None:
    """Add the two note templates and the paged listing; `browser()` is built on first use."""
    resources = NoteResources(browser)
    server.resource(NOTE_TEMPLATE, name="note", title="Memory note by path", mime_type=MIME,
                    description="A note of the memory root by its path relative to the root, "
                                "front matter included, secret values redacted.",
                    security=OWN_CHECKS)(resources.by_path)
    server.resource(ID_TEMPLATE, name="note-by-id", title="Memory note by memory_id",
                    mime_type=MIME, description="A note of the memory root by its memory_id.",
                    security=OWN_CHECKS)(resources.by_id)
    server.middleware.append(resources.listing)
