"""The eight MCP tools: schema'd arguments in, one MemoryService call, presented evidence out."""

from __future__ import annotations

import inspect
import logging
import threading
import time
from collections.abc import Awaitable, Callable
from contextlib import suppress
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

import anyio
import anyio.from_thread
import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field

from memory.application.requests import (MAX_DEPTH, MAX_LIMIT, MAX_NAME_CHARS, MAX_NOTE_CHARS,
                                         MAX_QUERY_CHARS)
from memory.domain.cancellation import CancelToken
from memory.domain.evidence import EvidencePacket
from memory.domain.explanation import Explanation
from memory.domain.feedback import FeedbackReceipt
from memory.domain.health import Health
from memory.domain.reading import Neighbourhood, NoteRead, RelationPath
from memory.domain.refresh import RefreshReport
from memory.entrypoints import note_presenters, presenters, status_presenters
from memory.entrypoints.converter import to_json
from memory.entrypoints.output_schema import schema_of

if TYPE_CHECKING:
    from memory.application.service import MemoryService

T = TypeVar("T")
log = logging.getLogger(__name__)
MAX_KEY_CHARS = 200  # requests.optional_key's bound on scope filters

# -- arguments (each becomes a JSON-schema property with its bounds) ----------------------

Query = Annotated[str, Field(
    min_length=1, max_length=MAX_QUERY_CHARS,
    description="What you want to know, in plain words; include identifiers, error strings, "
                "ticket ids (e.g. ALPHA-142) or file names when you have them.")]
Identity = Annotated[str, Field(
    min_length=1, max_length=MAX_NAME_CHARS,
    description="A note's memory_id, its path relative to the memory root, or its title.")]
RootScope = Annotated[str | None, Field(
    max_length=MAX_KEY_CHARS, description="Only notes of this root scope: 'work' or 'personal'.")]
Repository = Annotated[str | None, Field(
    max_length=MAX_KEY_CHARS,
    description="Only notes about this repository key (plus cross-cutting notes).")]
Project = Annotated[str | None, Field(
    max_length=MAX_KEY_CHARS,
    description="Only notes about this project key (plus cross-cutting notes).")]
Ticket = Annotated[str | None, Field(
    max_length=MAX_KEY_CHARS, description="Only notes about this ticket id, e.g. ALPHA-142.")]
StatusArg = Annotated[Literal["active", "needs-review", "superseded", "archived", "any"], Field(
    description="Note status to admit; 'active' (default) means current knowledge "
                "(active and needs-review notes); 'any' includes superseded and archived ones.")]
PathPrefix = Annotated[str | None, Field(
    max_length=MAX_KEY_CHARS,
    description="Only notes under this folder, relative to the memory root (e.g. 'Repos/api/').")]
Limit = Annotated[int, Field(ge=1, le=MAX_LIMIT, description="Most evidence items to return.")]
Line = Annotated[int | None, Field(ge=1, le=10**9, description="1-based line number (inclusive).")]
Depth = Annotated[int, Field(ge=1, le=MAX_DEPTH, description="Graph hops to follow (1-4).")]
Mode = Annotated[Literal["index", "full"], Field(
    description="'index': re-index changed notes (fast). "
                "'full': also rebuild the knowledge graph.")]
Force = Annotated[bool, Field(description="Publish a new generation even if nothing changed.")]
Relevance = Annotated[Literal["relevant", "irrelevant", "missing"], Field(
    description="'relevant' or 'irrelevant' for a returned item; 'missing' for a note that "
                "should have been returned.")]
FeedbackNote = Annotated[str | None, Field(
    max_length=MAX_NOTE_CHARS, description="Optional short reason, in your own words.")]


# -- structured output: each tool's result type, its outputSchema derived from it ---------


def _returns(result_type: type) -> Any:
    """A tool's return annotation: a CallToolResult whose structured content is
    `result_type` as the edge converter writes it, published with that type's schema
    (the SDK reads the schema from the pydantic model; its content is not re-validated,
    tests validate it against the schema)."""
    schema = schema_of(result_type)

    class Output(BaseModel):
        model_config = ConfigDict(extra="allow")

        @classmethod
        def __get_pydantic_json_schema__(cls, core_schema, handler) -> dict[str, Any]:
            return schema

    Output.__name__ = Output.__qualname__ = f"{result_type.__name__}Output"
    return Annotated[CallToolResult, Output]


Packet = _returns(EvidencePacket)
Read = _returns(NoteRead)
Neighbours = _returns(Neighbourhood)
Path = _returns(RelationPath)
Explained = _returns(Explanation)
Refreshed = _returns(RefreshReport)
Checked = _returns(Health)
Receipt = _returns(FeedbackReceipt)

READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)
ANNOTATIONS = {
    "memory_search": READ.model_copy(update={"title": "Search memory"}),
    "memory_get": READ.model_copy(update={"title": "Read a note"}),
    "memory_neighbors": READ.model_copy(update={"title": "Related notes"}),
    "memory_path": READ.model_copy(update={"title": "How two notes relate"}),
    "memory_explain": READ.model_copy(update={"title": "Explain a search"}),
    "memory_refresh": ToolAnnotations(title="Refresh the index", read_only_hint=False,
                                      destructive_hint=False, idempotent_hint=True,
                                      open_world_hint=False),
    "memory_health": READ.model_copy(update={"title": "Memory health"}),
    "memory_feedback": ToolAnnotations(title="Rate a result", read_only_hint=False,
                                       destructive_hint=False, idempotent_hint=False,
                                       open_world_hint=False),
}


def answer(result: Any, text: str) -> CallToolResult:
    """Structured content for programs, a text rendering for the model (which often sees
    only the text: it carries the same facts)."""
    return CallToolResult(content=[TextContent(type="text", text=text)],
                          structured_content=to_json(result))


class MemoryTools:
    """Thin handlers: the schema parses, one service call runs in a thread, a presenter renders."""

    def __init__(self, service: Callable[[], MemoryService]):
        self._service = service

    async def _call(self, use: Callable[[MemoryService], T]) -> T:
        # The service blocks (SQLite, model, Graphify); building it may import heavy libraries.
        return await anyio.to_thread.run_sync(lambda: use(self._service()))

    async def memory_search(self, query: Query, root_scope: RootScope = None,
                            repository: Repository = None, project: Project = None,
                            ticket: Ticket = None, status: StatusArg = "active",
                            path_prefix: PathPrefix = None, limit: Limit = 8) -> Packet:
        """Search long-term memory and get cited evidence. Call this FIRST, before starting
        work on a repository, ticket or project, and whenever past decisions, conventions,
        gotchas or context could matter. Scope filters are applied before ranking; a ticket
        id in the query (e.g. ALPHA-142) narrows the scope by itself. Each item cites
        `path:Lstart-Lend` (its `citation`): quote it when you rely on the item, and use
        memory_get to read more of the note. `no_answer: true` means memory holds nothing
        relevant enough: say so instead of guessing. Read `warnings` (stale index, model
        still loading, graph missing)."""
        packet = await self._call(lambda s: s.search(
            query, root_scope=root_scope, repository=repository, project=project, ticket=ticket,
            status=status, path_prefix=path_prefix, limit=limit))
        return answer(packet, presenters.packet_text(packet))

    async def memory_get(self, identity: Identity, start_line: Line = None,
                         end_line: Line = None) -> Read:
        """Read a note (or a line range of it) by memory_id, root-relative path or title.
        Lines come numbered so you can cite `path:Lstart-Lend` exactly. At most 2000 lines
        per call: when `truncated` is true, call again with a later start_line."""
        doc = await self._call(lambda s: s.get(identity, start_line, end_line))
        return answer(doc, note_presenters.get_text(doc))

    async def memory_neighbors(self, identity: Identity, depth: Depth = 1) -> Neighbours:
        """List what a note is related to in the knowledge graph (links, shared repositories,
        tickets, declared relations), up to `depth` hops. If it reports that no graph exists,
        run memory_refresh with mode 'full' first."""
        result = await self._call(lambda s: s.neighbors(identity, depth))
        return answer(result, note_presenters.neighbors_text(result))

    async def memory_path(self, source: Identity, target: Identity) -> Path:
        """Show how two notes are related: the shortest relationship path between them in the
        knowledge graph, each hop with its relation and, when known, the line that states it."""
        result = await self._call(lambda s: s.path(source, target))
        return answer(result, note_presenters.path_text(result))

    async def memory_explain(self, query: Query, identity: Identity | None = None,
                             root_scope: RootScope = None, repository: Repository = None,
                             project: Project = None, ticket: Ticket = None,
                             status: StatusArg = "active", path_prefix: PathPrefix = None,
                             limit: Limit = 8) -> Explained:
        """Explain a search: the parsed query (terms, identifiers), the resolved scope, each
        signal's candidates (lexical, semantic, graph) and the fused ranking. Pass `identity`
        to learn why one particular note was or was not returned (outside the scope, filtered
        by status, matched by no signal, or ranked below the cut-off)."""
        result = await self._call(lambda s: s.explain(
            query, identity, root_scope=root_scope, repository=repository, project=project,
            ticket=ticket, status=status, path_prefix=path_prefix, limit=limit))
        return answer(result, presenters.explain_text(result))

    async def memory_refresh(self, ctx: Context, mode: Mode = "index",
                             force: Force = False) -> Refreshed:
        """Re-index the memory root so searches see notes that were added, edited or removed
        (by you or anyone). Call it after writing notes. 'index' (default) re-embeds only
        changed notes; 'full' also rebuilds the knowledge graph used by memory_neighbors and
        memory_path (slower). Safe to repeat: if a refresh fails, the last good index keeps
        serving. Reports progress when the client asks for it; cancelling the request stops
        the refresh and keeps the last good index."""
        relay = _ProgressRelay(ctx)
        report = await relay.run(self._call(
            lambda s: s.refresh(mode, force, relay, relay.cancel)))
        return answer(report, status_presenters.refresh_text(report))

    async def memory_health(self) -> Checked:
        """Check the memory: index and graph generations, notes changed since the last refresh,
        whether semantic search is available (embedding model ready or still loading), a
        retrieval self-check and notes past their review date. Call it when results look
        stale, empty or wrong."""
        health = await self._call(lambda s: s.health())
        return answer(health, status_presenters.health_text(health))

    async def memory_feedback(self, query: Query, memory_id: Identity, relevance: Relevance,
                              note: FeedbackNote = None) -> Receipt:
        """Record whether a search result helped: 'relevant' or 'irrelevant' for a memory_id
        that memory_search returned for `query`, or 'missing' for a note that should have been
        returned. Appends to a local log used to tune ranking; no note is changed."""
        record = await self._call(lambda s: s.feedback(query, memory_id, relevance, note))
        return answer(record, status_presenters.feedback_text(record))


def register_tools(server: MCPServer, service: Callable[[], MemoryService]) -> None:
    """Add the eight tools to `server`; each call asks `service()` for the MemoryService."""
    tools = MemoryTools(service)
    for name, hints in ANNOTATIONS.items():
        handler = getattr(tools, name)
        server.add_tool(handler, name=name, title=hints.title, annotations=hints,
                        description=inspect.cleandoc(handler.__doc__), structured_output=True)


class _ProgressRelay:
    """Refresh progress from the worker thread to the client, at most a few times a second,
    and the client's cancel back to the worker thread.

    The pump that sends progress runs in the request's own task group. On
    notifications/cancelled the SDK cancels that group's scope: the pump stops at once (no
    progress after the cancel) and sets the CancelToken the refresh checks between
    batches, so the worker thread stops too instead of running to the end unseen.
    """

    def __init__(self, ctx: Context, every_s: float = 0.25):
        self._ctx = ctx
        self._every = every_s
        self._last = 0.0
        self._lock = threading.Lock()
        self.cancel = CancelToken()
        self._send, self._receive = anyio.create_memory_object_stream[tuple[int, int, str]](16)

    def __call__(self, stage: str, done: int, total: int) -> None:
        if self.cancel.cancelled():
            return
        now = time.monotonic()
        with self._lock:
            if done < total and now - self._last < self._every:
                return
            self._last = now
        try:
            anyio.from_thread.run_sync(self._offer, (done, total, f"{stage}: {done}/{total}"))
        except Exception:  # noqa: BLE001 - advisory: a client gone away must not fail a refresh
            log.debug("refresh progress not delivered", exc_info=True)

    def _offer(self, item: tuple[int, int, str]) -> None:
        # A client reading slowly loses progress lines, never holds up the refresh.
        with suppress(anyio.WouldBlock, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._send.send_nowait(item)

    async def run(self, work: Awaitable[T]) -> T:
        """Await work (the refresh in its thread) while the pump relays its progress."""
        failure: Exception | None = None
        async with anyio.create_task_group() as group:
            group.start_soon(self._pump)
            try:
                result = await work
            except Exception as exc:  # noqa: BLE001 - raised again below, outside the group
                failure = exc
            finally:
                group.cancel_scope.cancel()
        if failure is not None:
            raise failure
        return result

    async def _pump(self) -> None:
        try:
            async for done, total, message in self._receive:
                try:
                    await self._ctx.report_progress(done, total, message)
                except Exception:  # noqa: BLE001 - advisory, as above
                    log.debug("refresh progress not delivered", exc_info=True)
        finally:
            # Reached when the request's scope is cancelled: by the client, or by run()
            # once the refresh is over (a cancel then changes nothing).
            self.cancel.cancel("the client cancelled the refresh; the last good index serves")
