"""Bounds on what one client may hold or ask: a deadline for a request's headers (in
uvicorn's h11 protocol, which has none), and a request rate per credential.

The other bounds are the libraries' own: uvicorn's `limit_concurrency` caps connections
(503), and the gate in guards.py times the body and counts a credential's sessions.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable, Hashable

import h11
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser, authorization_context
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from uvicorn.protocols.http.h11_impl import H11Protocol

_TIMEOUT_BODY = b"request headers not received in time; connection closed\n"
_TIMEOUT_RESPONSE = (b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
                     b"connection: close\r\ncontent-length: " + str(len(_TIMEOUT_BODY)).encode()
                     + b"\r\n\r\n" + _TIMEOUT_BODY)


def with_header_deadline(seconds: float) -> type[H11Protocol]:
    """uvicorn's h11 protocol, closing (after a 408) a connection whose request line and
    headers are not all in within `seconds` of its first byte or of the connection opening:
    a slowloris client sending a byte at a time, or one that connects and says nothing."""

    class H11WithHeaderDeadline(H11Protocol):
        _deadline: asyncio.TimerHandle | None = None

        def connection_made(self, transport) -> None:  # type: ignore[no-untyped-def]
            super().connection_made(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            if self._deadline is None and self.conn.their_state is h11.IDLE:
                self._arm()  # the next request on a kept-alive connection starts its clock
            super().data_received(data)
            if self.conn.their_state is not h11.IDLE:
                self._disarm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _arm(self) -> None:
            self._disarm()
            self._deadline = self.loop.call_later(seconds, self._expired)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _expired(self) -> None:
            self._deadline = None
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                # h11 sends no response before a request; this one is the whole reply.
                self.transport.write(_TIMEOUT_RESPONSE)
                self.transport.close()

    return H11WithHeaderDeadline


class RequestRate:
    """A token bucket per credential: `per_minute` requests as a burst, refilled evenly."""

    def __init__(self, per_minute: int, clock: Callable[[], float] = time.monotonic):
        self._capacity = float(per_minute)
        self._per_second = per_minute / 60.0
        self._clock = clock
        self._buckets: dict[Hashable, tuple[float, float]] = {}  # who -> (tokens, when)

    def admit(self, who: Hashable) -> float:
        """0 when `who` may make a request now (and it is counted), else seconds to wait."""
        now = self._clock()
        tokens, then = self._buckets.get(who, (self._capacity, now))
        tokens = min(self._capacity, tokens + (now - then) * self._per_second)
        if tokens < 1.0:
            self._buckets[who] = (tokens, now)
            return (1.0 - tokens) / self._per_second
        self._buckets[who] = (tokens - 1.0, now)
        if len(self._buckets) > 4096:
            self._forget_full(now)
        return 0.0

    def retry_after(self, wait_s: float) -> bytes:
        return str(max(1, math.ceil(wait_s))).encode()

    def _forget_full(self, now: float) -> None:
        """Drop the buckets refilled to the brim: they hold nothing a new one would not."""
        full = [who for who, (tokens, then) in self._buckets.items()
                if tokens + (now - then) * self._per_second >= self._capacity]
        for who in full:
            del self._buckets[who]


def sessions_held(manager: StreamableHTTPSessionManager) -> Callable[[AuthenticatedUser], int]:
    """How many open sessions the SDK's session manager holds for a credential: the manager
    (mcp 2.3) records each session's owner to refuse it to anyone else, but caps only the
    total, so one token could hold every session; it offers no public count of its own."""
    owners = manager._session_owners  # read once, at start-up: an SDK without it fails there

    def held(user: AuthenticatedUser) -> int:
        owner = authorization_context(user)
        return sum(1 for other in owners.values() if other == owner)
    return held
