"""The client's workspace folders (MCP roots), asked for on the first tool call and after
the client says they changed, so that searches default to the repository being worked on.

Roots belong to one client session: over HTTP one process serves many, so each session
keeps its own, and a tool call carries its session's workspace in `CURRENT_WORKSPACE`
(a context variable, copied into the worker thread that runs the call).
"""

from __future__ import annotations

import ipaddress
import logging
from collections import OrderedDict
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse
from urllib.request import url2pathname

import anyio
from attrs import frozen
from mcp_types import ListRootsRequest, ListRootsResult

from memory.entrypoints.settings import WORKSPACE_HEADER

log = logging.getLogger(__name__)

LIST_CHANGED = "notifications/roots/list_changed"
MAX_SESSIONS = 4096  # sessions whose roots are remembered; the oldest are forgotten first


@frozen
class Workspace:
    """Where one client session works: its MCP roots, its bridge's folder, its scope settings."""

    roots: tuple[str, ...] = ()
    folder: str | None = None
    repository: str | None = None
    auto_scope: bool = True


CURRENT_WORKSPACE: ContextVar[Workspace | None] = ContextVar("ai_memory_workspace", default=None)


def folders_of(uris: Sequence[str]) -> list[str]:
    """Local folders named by `file://` root URIs, in order; other schemes are skipped."""
    folders = []
    for uri in uris:
        parsed = urlparse(str(uri))
        if parsed.scheme != "file":
            continue
        path = url2pathname(unquote(parsed.path))
        if parsed.netloc and parsed.netloc != "localhost":
            path = f"//{parsed.netloc}{path}"  # a UNC share
        if path:
            folders.append(path)
    return folders


class _SessionRoots:
    """One session's roots as last fetched, and whether the client said they changed."""

    def __init__(self, stale: bool = True):
        self.stale = stale
        self.folders: tuple[str, ...] = ()


class ClientRoots:
    """Middleware: fetch a session's roots before its first tool call and after list_changed.

    `apply(folders)` (the stdio server, one session per process) also receives them.
    """

    def __init__(self, apply: Callable[[list[str]], None] | None = None,
                 timeout_s: float = 2.0):
        self._apply = apply
        self._timeout_s = timeout_s
        self._sessions: OrderedDict[str | None, _SessionRoots] = OrderedDict()

    async def __call__(self, ctx: Any, call_next: Callable) -> Any:
        state = self._session(ctx)
        if state is None or ctx.method not in (LIST_CHANGED, "tools/call"):
            return await call_next(ctx)
        if ctx.method == LIST_CHANGED:
            state.stale = True
            return await call_next(ctx)
        if state.stale:
            state.stale = False  # the event loop is single-threaded: no race
            state.folders = await self._fetch(ctx.session, state.folders)
        token = CURRENT_WORKSPACE.set(_workspace(state.folders, getattr(ctx, "request", None)))
        try:
            return await call_next(ctx)
        finally:
            CURRENT_WORKSPACE.reset(token)

    def _session(self, ctx: Any) -> _SessionRoots | None:
        """The state of ctx's session: over HTTP keyed by its session id, over stdio the one."""
        request = getattr(ctx, "request", None)
        key = None if request is None else request.headers.get("mcp-session-id")
        if request is not None and key is None:
            return _SessionRoots(stale=False)  # sessionless: nothing to remember or ask
        state = self._sessions.get(key)
        if state is None:
            state = self._sessions[key] = _SessionRoots()
            while len(self._sessions) > MAX_SESSIONS:
                self._sessions.popitem(last=False)
        self._sessions.move_to_end(key)
        return state

    async def _fetch(self, session: Any, previous: tuple[str, ...]) -> tuple[str, ...]:
        capabilities = session.client_capabilities
        if capabilities is None or capabilities.roots is None or not session.can_send_request:
            return previous
        try:
            # Not session.list_roots(): that wrapper warns (roots leave the 2026 protocol).
            with anyio.fail_after(self._timeout_s):
                result = await session.send_request(ListRootsRequest(), ListRootsResult)
        except Exception:  # noqa: BLE001 - no roots: searches just have no inferred scope
            log.info("the client did not list its roots", exc_info=True)
            return previous
        folders = folders_of([str(root.uri) for root in result.roots])
        log.info("client workspace roots: %s", folders)
        if self._apply is not None:
            self._apply(folders)
        return tuple(folders)


def _workspace(roots: tuple[str, ...], request: Any) -> Workspace:
    """The session's workspace: its roots, plus what its local bridge said about itself."""
    raw = request.headers.get(WORKSPACE_HEADER) if request is not None else None
    if not raw or not _from_this_machine(request):
        return Workspace(roots=roots)
    fields = {k: v[-1] for k, v in parse_qs(raw, max_num_fields=8).items()}
    folder = next(iter(folders_of([fields.get("folder", "")])), None)
    auto = fields.get("auto_scope", "1").strip().lower() not in ("0", "false", "no", "off")
    return Workspace(roots=roots, folder=folder, repository=fields.get("repository") or None,
                     auto_scope=auto)


def _from_this_machine(request: Any) -> bool:
    # A folder path means something only on the machine it names; a remote peer's would make
    # the server probe its own folders on that peer's say-so.
    client = getattr(request, "client", None)
    try:
        return client is not None and ipaddress.ip_address(client.host).is_loopback
    except ValueError:
        return False
