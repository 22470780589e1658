"""The MCP stdio server: eight tools over a lazily built MemoryService, errors as tool errors.

Start-up stays light on purpose: the container (SQLite, Graphify, sentence-transformers,
torch) is imported only when a tool call needs it or once the client has listed the tools,
so `initialize` and `tools/list` answer while the model is still loading.
"""

from __future__ import annotations

import io
import logging
import os
import sys
import threading
from collections.abc import Callable
from contextlib import suppress
from typing import TYPE_CHECKING, Any, TextIO

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, CallToolResult, TextContent
from pydantic import ValidationError

from memory import __version__
from memory.domain.errors import AiMemoryError
from memory.entrypoints.error_kinds import kind_of
from memory.entrypoints.mcp_capture_tools import ANNOTATIONS as CAPTURE_ANNOTATIONS
from memory.entrypoints.mcp_capture_tools import register_capture_tools
from memory.entrypoints.mcp_prompts import register_prompts
from memory.entrypoints.mcp_resources import register_resources
from memory.entrypoints.mcp_roots import ClientRoots
from memory.entrypoints.mcp_stdio import AnsweringReadStream, CheckedLines, claimed_stdin
from memory.entrypoints.mcp_tools import ANNOTATIONS as TOOL_ANNOTATIONS
from memory.entrypoints.mcp_tools import register_tools

if TYPE_CHECKING:
    from memory.application.browse.notes import NoteBrowser
    from memory.application.capture.service import CaptureService
    from memory.application.service import MemoryService
    from memory.entrypoints.container import Application
    from memory.entrypoints.settings import Settings

log = logging.getLogger("memory.mcp")

INSTRUCTIONS = """\
ai-memory is the user's long-term memory: Markdown notes about repositories, tickets,
projects, decisions, tools and workflows, written by people and by agents like you.
- Before starting work on a repository, ticket or project, call memory_search first
  (with repository / project / ticket filters when you know them) and read what earlier
  sessions recorded.
- Ground what you take from memory in its evidence: cite each item as path:Lstart-Lend
  (its `citation`), and read more with memory_get. When `no_answer` is true, say that
  memory holds nothing on it; do not invent.
- Notes you write or edit in the memory root are indexed by themselves before your next
  search (its `freshness` says so); memory_refresh is for a full rebuild, or when a search
  warns that the index is stale or says `not-indexed`.
- Without repository / project / ticket filters, memory_search defaults to the repository
  of your workspace when memory knows it (`scope.inferred` says so); pass a repository,
  project or ticket to search elsewhere.
- memory_health explains empty or stale results; memory_feedback records whether a result
  helped."""

# Most specific first: a duplicate or a secret is also an invalid request.
# Said only by a server that lists the write tools.
WRITE_INSTRUCTIONS = """
- To save what you learned, search first, then memory_edit the note that covers it (with
  the content_hash memory_get returned) or memory_write a new one in its scope; both are
  indexed before they return. On `conflict:` read the note again and redo the edit; on
  `duplicate:` edit the note named instead."""



class AiMemoryServer(MCPServer):
    """MCPServer whose tool failures become one-line tool errors; the server stays up."""

    async def call_tool(self, name: str, arguments: dict[str, Any],
                        context: Any = None) -> Any:
        known = [tool.name for tool in await self.list_tools()]
        if name not in known:  # a protocol error, not a failure of one of our tools
            raise MCPError(code=INVALID_PARAMS, message=_one_line(
                f"unknown tool {name!r}; the tools are {', '.join(known)}", 300))
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            return tool_error(name, exc)

    async def run_stdio_async(self) -> None:
        """The SDK's stdio transport, with every line it cannot parse answered (mcp_stdio)."""
        with claimed_stdin() as stdin:
            lines = CheckedLines(stdin)
            async with stdio_server(stdin=lines) as (read_stream,  # type: ignore[arg-type]
                                                     write_stream):
                lines.answer_on(write_stream)
                lowlevel = self._lowlevel_server  # what MCPServer.run_stdio_async drives (mcp 2.3)
                await lowlevel.run(AnsweringReadStream(read_stream, write_stream), write_stream,
                                   lowlevel.create_initialization_options())


def tool_error(name: str, exc: ToolError) -> CallToolResult:
    """Translate what a tool raised into an isError result with a message an agent can act on."""
    cause = exc.__cause__
    if isinstance(cause, ValidationError) and not isinstance(exc, UnexpectedToolError):
        message = f"invalid arguments for {name}: {_validation_summary(cause)}"
    elif isinstance(cause, AiMemoryError):
        kind, _ = kind_of(cause)
        message = f"{kind}: {cause}"
    elif isinstance(exc, UnexpectedToolError) and cause is not None:
        log.error("tool %s failed unexpectedly", name, exc_info=cause)
        message = f"internal error: {type(cause).__name__}: {cause}"
    else:  # the SDK's own, e.g. an unknown tool name
        message = str(exc)
    return CallToolResult(content=[TextContent(type="text", text=_one_line(message))],
                          is_error=True)


def _validation_summary(error: ValidationError) -> str:
    # Field and rule only: echoing the rejected value could repeat a megabyte of input.
    parts = [f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}"
             for e in error.errors(include_url=False, include_input=False)]
    return "; ".join(parts)


def _one_line(text: str, limit: int = 1000) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[:limit - 3] + "..."


class _WarmUp:
    """Middleware: once the client has listed the tools, warm the service in a daemon thread."""

    def __init__(self, warm: Callable[[], None]):
        self._warm = warm
        self._started = False

    async def __call__(self, ctx: Any, call_next: Callable) -> Any:
        if ctx.method == "tools/call":
            self.start()
        result = await call_next(ctx)
        if ctx.method == "tools/list":
            self.start()  # after the answer is built: the handshake never waits on imports
        return result

    def start(self) -> None:
        if not self._started:  # only the event loop calls this: no race
            self._started = True
            threading.Thread(target=self._run, name="ai-memory-warm", daemon=True).start()

    def _run(self) -> None:
        try:
            self._warm()
        except AiMemoryError as exc:  # one on purpose (an old pgvector, no store): its words do
            kind, _ = kind_of(exc)
            log.warning("warming up failed (%s: %s); the first tool call will try again", kind,
                        _one_line(str(exc)))
        except Exception:  # noqa: BLE001 - tool calls will report the same failure to the agent
            log.warning("warming up failed; the first tool call will try again", exc_info=True)


class StdoutGuard(io.TextIOBase):
    """sys.stdout while serving: text goes to stderr, `.buffer` stays the real stdout.

    The SDK's stdio transport (2.3.0) finds the wire through `sys.stdout.buffer`, takes a
    private duplicate of fd 1 and points fd 1 at stderr; this guard keeps Python-level
    prints (libraries, progress bars, the warm-up thread) off the wire before, during and
    after that, and even where the transport could not divert the descriptor.
    """

    def __init__(self, real: TextIO, sink: TextIO):
        super().__init__()
        self.buffer = real.buffer
        self._sink = sink

    @property
    def encoding(self) -> str:
        return self._sink.encoding

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        return self._sink.write(text)

    def flush(self) -> None:
        self._sink.flush()

    def fileno(self) -> int:
        return self._sink.fileno()

    def isatty(self) -> bool:
        return False


def build_server(service_factory: Callable[[], MemoryService], *,
                 warm: Callable[[], None] | None = None,
                 roots: Callable[[list[str]], None] | None = None,
                 browser: Callable[[], NoteBrowser] | None = None,
                 capture: Callable[[], CaptureService] | None = None,
                 refreshes: bool = True, **transport: Any) -> MCPServer:
    """The `ai-memory` MCP server; `service_factory()` gives the MemoryService (slow only once).

    `roots(folders)` receives the client's workspace folders when it exposes them;
    `browser()` gives the notes offered as resources; `capture()` the CaptureService of the
    write tools, left out when None (read-only). `transport` goes to the SDK server as is:
    the HTTP server's `auth` and `token_verifier`.
    """
    middleware = [*([_WarmUp(warm)] if warm else []), *([ClientRoots(roots)] if roots else [])]
    server = AiMemoryServer(
        "ai-memory", title="ai-memory", version=__version__,
        instructions=INSTRUCTIONS + (WRITE_INSTRUCTIONS if capture is not None else ""),
        description="Long-term memory for coding agents: cited evidence from Markdown notes.",
        middleware=middleware or None,
        log_level="WARNING", **transport)
    register_tools(server, service_factory, refreshes=refreshes)
    if capture is not None:
        register_capture_tools(server, capture)
    register_prompts(server)
    if browser is not None:
        register_resources(server, browser)
    return server


def tool_names(*, writes: bool = True) -> tuple[str, ...]:
    """The tools `build_server` declares: the read tools, and the write tools unless read-only.
    The one list that the set-up probe and the docs tests compare the server with."""
    return (*TOOL_ANNOTATIONS, *(CAPTURE_ANNOTATIONS if writes else ()))


class LazyApplication:
    """The composition root, built on first use (thread-safe), so start-up imports nothing heavy."""

    def __init__(self, settings: Settings,
                 compose: Callable[[Application], None] | None = None):
        """`compose(app)` may override providers after the container is built, before use."""
        self._settings = settings
        self._compose = compose
        self._lock = threading.Lock()
        self._app: Application | None = None
        self._service: MemoryService | None = None
        self._roots: list[str] | None = None
        self._closed = False

    def service(self) -> MemoryService:
        if self._service is None:
            with self._lock:
                if self._service is None:
                    from memory.entrypoints.container import build  # heavy: adapters, models
                    self._app = build(self._settings, serving=True)
                    if self._compose is not None:
                        self._compose(self._app)
                    if self._roots is not None:
                        self._app.use_cases.workspace().set_roots(self._roots)
                    self._service = self._app.use_cases.service()
        return self._service

    def browser(self) -> NoteBrowser:
        self.service()  # builds the container once
        return self._app.use_cases.browser()

    def capture(self) -> CaptureService:
        self.service()  # builds the container once
        return self._app.use_cases.capture()

    @property
    def writes(self) -> Callable[[], CaptureService] | None:
        """What the write tools call, or None when the server is read-only."""
        return None if self._settings.read_only else self.capture

    @property
    def refreshes(self) -> bool:
        """Whether memory_refresh may index this server's root (not a shared index's reader)."""
        return not self._settings.reads_shared_index

    def warm(self) -> None:
        """Build the service, start loading the embedding model, then watch the root."""
        self.service()
        self._app.gateways.embedder().warm()
        with self._lock:
            if self._closed:
                return
            freshness = self._app.use_cases.freshness()
        # Outside the lock: catching up with edits made while no server ran may take a while.
        freshness.start()

    def set_roots(self, folders: list[str]) -> None:
        """The client's workspace folders, for the default repository of searches."""
        with self._lock:
            self._roots = list(folders)
            app = self._app
        if app is not None:
            app.use_cases.workspace().set_roots(folders)

    def close(self) -> None:
        """Stop watching; the server is going away."""
        with self._lock:
            self._closed = True
            app = self._app
        if app is not None:
            app.use_cases.freshness().stop()


def serve(settings: Settings) -> int:
    """Serve MCP over stdio until the client closes stdin; only MCP messages reach stdout."""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("memory").setLevel(logging.INFO)
    if not isinstance(sys.stdout, StdoutGuard):
        sys.stdout = StdoutGuard(sys.stdout, sys.stderr)
    app = LazyApplication(settings)
    server = build_server(app.service, warm=app.warm, roots=app.set_roots, browser=app.browser,
                          capture=app.writes, refreshes=app.refreshes)
    log.info("ai-memory %s serving %s over stdio%s", __version__, settings.root,
             "" if settings.watch else " (not watching)")
    try:
        server.run("stdio")
    finally:
        app.close()
        # The transport gave fd 1 back; a warm-up thread may still write while we exit.
        with suppress(OSError):
            os.dup2(sys.stderr.fileno(), 1)
    return 0
