"""The eight MCP tools: schema'd arguments in, one MemoryService call, presented evidence out."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import anyio.to_thread
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, ConfigDict

from memory.domain.errors import InvalidRequest
from memory.domain.evidence import EvidencePacket
from memory.domain.explanation import Explanation
from memory.domain.feedback import FeedbackReceipt
from memory.domain.health import SHARED_INDEX, Health
from memory.domain.reading import Neighbourhood, NoteRead, RelationPath
from memory.domain.refresh import RefreshReport
from memory.domain.tokens import READ_ONLY_TOKEN, may_change_memory
from memory.entrypoints import note_presenters, presenters, status_presenters
from memory.entrypoints.converter import to_json
from memory.entrypoints.mcp_arguments import (Depth, FeedbackNote, FeedbackQuery, Force,
                                              GraphStatus, Identity, Limit, Line, Mode,
                                              PathPrefix, Project, Query, Relevance, Repository,
                                              RootScope, StatusArg, Ticket, strict)
from memory.entrypoints.mcp_progress import ProgressRelay
from memory.entrypoints.output_schema import schema_of

if TYPE_CHECKING:
    from memory.application.service import MemoryService

T = TypeVar("T")

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
READER_REFRESH = f"memory_refresh does not index here: {SHARED_INDEX}"
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
    """Thin handlers: the schema parses, one service call runs in a thread, a presenter renders.

    Each docstring is the tool's description for the model, flowed into one paragraph.
    """

    def __init__(self, service: Callable[[], MemoryService], refreshes: bool = True):
        self._service = service
        self._refreshes = refreshes  # False: a shared index's reader (the indexer refreshes)

    async def _call(self, use: Callable[[MemoryService], T]) -> T:
        # The service blocks (SQLite, model, Graphify); building it may import heavy libraries.
        return await anyio.to_thread.run_sync(lambda: use(self._service()))

    async def memory_search(self, query: Query, root_scope: RootScope = None,
                            repository: Repository = None, project: Project = None,
                            ticket: Ticket = None, status: StatusArg = "active",
                            path_prefix: PathPrefix = None, limit: Limit = 8) -> Packet:
        """Search the user's long-term memory (Markdown notes on repositories, tickets,
        projects, decisions and workflows) and get cited evidence. Call it first, before
        starting work on a repository, ticket or project, and whenever past decisions,
        conventions, gotchas or context could matter. Scope filters apply before ranking;
        without repository, project or ticket the workspace's repository is used when memory
        knows it (`scope.inferred` says so), and a ticket id in the query is ranked first.
        It returns `items`, each citing `path:Lstart-Lend` (its `citation`) with the cited
        lines as `text`: quote the citation when you rely on an item, and call memory_get to
        read more of the note. A line too long for the evidence budget ends in `[cut: N more
        characters]` and its number is in the item's `cut_lines`. When `no_answer` is true,
        memory holds nothing about the question (`no_answer_reason` says why): say so instead
        of guessing. A question for a secret's value always gets `no_answer`, because memory
        never holds secret values; notes on where the secret is kept or how it rotates may
        come as `leads`, which are not answers. Read every `warning` (stale or missing index,
        model still loading, graph missing) before trusting the results."""
        packet = await self._call(lambda s: s.search(
            query, root_scope=root_scope, repository=repository, project=project, ticket=ticket,
            status=status, path_prefix=path_prefix, limit=limit))
        return answer(packet, presenters.packet_text(packet))

    async def memory_get(self, identity: Identity, start_line: Line = None,
                         end_line: Line = None) -> Read:
        """Read a note, or a range of its lines, by memory_id, path relative to the memory
        root, or title. Lines come numbered so that you can cite `path:Lstart-Lend` exactly;
        secret values are replaced by `[REDACTED:kind]` markers (`redacted_lines` lists those
        lines). One call returns at most 2,000 lines and 100,000 characters: when `truncated`
        is true, call again with `start_line` set to `next_start_line`. A single line longer
        than a call can hold is shown cut, ending in `[cut: N more characters]`, and listed
        in `cut_lines`. An empty note reads as no lines."""
        doc = await self._call(lambda s: s.get(identity, start_line, end_line))
        return answer(doc, note_presenters.get_text(doc))

    async def memory_neighbors(self, identity: Identity, depth: Depth = 1,
                               root_scope: RootScope = None, repository: Repository = None,
                               project: Project = None, ticket: Ticket = None,
                               status: GraphStatus = "any",
                               path_prefix: PathPrefix = None) -> Neighbours:
        """List what a note is related to in the knowledge graph (links, declared relations,
        supersession, shared repositories and tickets), up to `depth` hops, each neighbour
        with the relations that reach it and, when known, where the relation is written. It
        stays within the same scope as memory_search (the workspace's repository by default):
        a note outside the scope is never shown, and a warning says how many were left out.
        If it answers that no graph exists, call memory_refresh with mode 'full' first."""
        result = await self._call(lambda s: s.neighbors(
            identity, depth, root_scope=root_scope, repository=repository, project=project,
            ticket=ticket, status=status, path_prefix=path_prefix))
        return answer(result, note_presenters.neighbors_text(result))

    async def memory_path(self, source: Identity, target: Identity, root_scope: RootScope = None,
                          repository: Repository = None, project: Project = None,
                          ticket: Ticket = None, status: GraphStatus = "any",
                          path_prefix: PathPrefix = None) -> Path:
        """Show how two notes are related: the shortest relationship path between them in the
        knowledge graph, each hop with its relation and, when known, the line that states it.
        It stays within the same scope as memory_search (the workspace's repository by
        default): `connected: false` with a warning means the only path found leaves the
        scope, and naming a note outside the scope is an error that says which filter left it
        out."""
        result = await self._call(lambda s: s.path(
            source, target, root_scope=root_scope, repository=repository, project=project,
            ticket=ticket, status=status, path_prefix=path_prefix))
        return answer(result, note_presenters.path_text(result))

    async def memory_explain(self, query: Query, identity: Identity | None = None,
                             root_scope: RootScope = None, repository: Repository = None,
                             project: Project = None, ticket: Ticket = None,
                             status: StatusArg = "active", path_prefix: PathPrefix = None,
                             limit: Limit = 8) -> Explained:
        """Explain a memory_search with the same arguments: the parsed query (terms,
        identifiers), the scope it ran under, how many candidates each signal found (lexical,
        semantic, graph) and the fused ranking with every candidate's scores and reasons. Pass
        `identity` to learn why one particular note was or was not returned (outside the
        scope, filtered by status, matched by no signal, ranked below the cut-off, or no
        answer). Use it when a search misses a note you expected."""
        result = await self._call(lambda s: s.explain(
            query, identity, root_scope=root_scope, repository=repository, project=project,
            ticket=ticket, status=status, path_prefix=path_prefix, limit=limit))
        return answer(result, presenters.explain_text(result))

    async def memory_refresh(self, ctx: Context, mode: Mode = "index",
                             force: Force = False) -> Refreshed:
        """Re-index the memory root so that searches see notes added, edited or removed. A
        running server indexes edits by itself before the next search, so call this only
        when a warning says the index is stale or missing, or with mode 'full' to rebuild
        the knowledge graph used by memory_neighbors and memory_path (slower). 'index'
        (default) re-embeds only changed notes. It is safe to repeat: if a refresh fails,
        `ok` is false, each stage says why, and the last good index keeps serving. It reports
        progress when the client asks for it; cancelling the request stops the refresh and
        keeps the last good index."""
        if not self._refreshes:
            raise InvalidRequest(READER_REFRESH)
        relay = ProgressRelay(ctx)
        report = await relay.run(self._call(
            lambda s: s.refresh(mode, force, relay, relay.cancel)))
        return answer(report, status_presenters.refresh_text(report))

    async def memory_health(self) -> Checked:
        """Check the memory when results look stale, empty or wrong: the index and graph
        generations, notes changed since the index was built, whether the graph is behind the
        index, whether semantic search is available (embedding model ready or still loading),
        a retrieval self-check, notes past their review date, notes holding secret-shaped
        text (values never shown) and whether you may write (`writes`, with the reason when
        not). A server reading a shared index says who refreshes it (`index.refreshed_by`)
        instead of comparing its own folder. `healthy` is false when there is no index, the
        index is damaged, the self-check fails or the graph still has notes that moved;
        `problems` and `warnings` say what to do."""
        refused = _writes_refused()  # read here: the call's credential is this task's
        health = await self._call(lambda s: s.health(refused))
        return answer(health, status_presenters.health_text(health))

    async def memory_feedback(self, query: FeedbackQuery, memory_id: Identity,
                              relevance: Relevance, note: FeedbackNote = None) -> Receipt:
        """Record whether a search result helped: 'relevant' or 'irrelevant' for a memory_id
        that memory_search returned for `query`, or 'missing' for a note that should have been
        returned. It appends to a local log used to tune ranking; no note is changed."""
        record = await self._call(lambda s: s.feedback(query, memory_id, relevance, note))
        return answer(record, status_presenters.feedback_text(record))


def _writes_refused() -> str | None:
    """Why the scope guard refuses this call's credential the write tools (None: it does
    not, or there is no credential: stdio, or HTTP without authentication)."""
    token = get_access_token()
    return None if token is None or may_change_memory(token.scopes) else READ_ONLY_TOKEN


def description(handler: Callable) -> str:
    """A handler's docstring as the flowing paragraph a model reads (no hard line breaks)."""
    return " ".join(handler.__doc__.split())


def register_tools(server: MCPServer, service: Callable[[], MemoryService],
                   refreshes: bool = True) -> None:
    """Add the read tools to `server`; each call asks `service()` for the MemoryService."""
    add_tools(server, MemoryTools(service, refreshes), ANNOTATIONS)


def add_tools(server: MCPServer, tools: object, annotations: dict[str, ToolAnnotations]) -> None:
    """Add each handler of `tools` named in `annotations`, with strict arguments."""
    for name, hints in annotations.items():
        handler = getattr(tools, name)
        server.add_tool(handler, name=name, title=hints.title, annotations=hints,
                        description=description(handler), structured_output=True)
        # mcp 2.3 ignores unknown argument keys and has no public way to change that: its
        # tool registry is private. tests/unit/entrypoints/test_mcp_tools pins it.
        tool = server._tool_manager.get_tool(name)
        tool.fn_metadata.arg_model = strict(tool.fn_metadata.arg_model, name)
        tool.parameters = tool.fn_metadata.arg_model.model_json_schema(by_alias=True)
