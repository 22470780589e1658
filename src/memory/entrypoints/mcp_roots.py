"""The client's workspace folders (MCP roots), asked for on the first tool call and after
the client says they changed, so that searches default to the repository being worked on."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import unquote, urlparse
from urllib.request import url2pathname

import anyio
from mcp_types import ListRootsRequest, ListRootsResult

log = logging.getLogger(__name__)

LIST_CHANGED = "notifications/roots/list_changed"


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


class ClientRoots:
    """Middleware: fetch the client's roots before the first tool call and after list_changed."""

    def __init__(self, apply: Callable[[list[str]], None], timeout_s: float = 2.0):
        self._apply = apply
        self._timeout_s = timeout_s
        self._stale = True

    async def __call__(self, ctx: Any, call_next: Callable) -> Any:
        if ctx.method == LIST_CHANGED:
            self._stale = True
        elif ctx.method == "tools/call" and self._stale:
            self._stale = False  # the event loop is single-threaded: no race
            await self._fetch(ctx.session)
        return await call_next(ctx)

    async def _fetch(self, session: Any) -> None:
        capabilities = session.client_capabilities
        if capabilities is None or capabilities.roots is None:
            return
        try:
            # Not session.list_roots(): that wrapper warns (roots leave the 2026 protocol).
            with anyio.fail_after(self._timeout_s):
                result = await session.send_request(ListRootsRequest(), ListRootsResult)
        except Exception:  # noqa: BLE001 - no roots: searches just have no inferred scope
            log.info("the client did not list its roots", exc_info=True)
            return
        folders = folders_of([str(root.uri) for root in result.roots])
        log.info("client workspace roots: %s", folders)
        self._apply(folders)
