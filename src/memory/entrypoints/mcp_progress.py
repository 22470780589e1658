"""Refresh progress from the worker thread to the MCP client, and its cancel back."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Awaitable
from contextlib import suppress
from typing import TypeVar

import anyio
import anyio.from_thread
from mcp.server.mcpserver import Context

from memory.domain.cancellation import CancelToken

T = TypeVar("T")
log = logging.getLogger(__name__)


class ProgressRelay:
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
