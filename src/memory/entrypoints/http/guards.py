"""ASGI guards in front of the MCP endpoint: Host/Origin (DNS rebinding), the body's size, time
and JSON (one bounded parse), per-token concurrency, rate and sessions, and the scope a tool
call needs (HTTP 403 `insufficient_scope`, SEP-2350).

Refusals are answered here, before the MCP transport sees the request, and their bodies name
the rule broken, never the credential presented.
"""

from __future__ import annotations

import ipaddress
import json
import logging
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable
from urllib.parse import urlsplit

import anyio
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import principal_components
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types import INVALID_REQUEST
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memory.domain.tokens import READ_ONLY_TOKEN, READ_SCOPE, WRITE_SCOPE, may_change_memory
from memory.entrypoints.http.config import HttpConfig, Limits
from memory.entrypoints.http.limits import RequestRate
from memory.entrypoints.jsonrpc_input import MalformedMessage, parse_message

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")
ReadOnly = Callable[[str], Awaitable[bool | None]]  # tool name -> read-only? (None: no such tool)
SessionsOf = Callable[[AuthenticatedUser], int]  # how many MCP sessions this credential holds
log = logging.getLogger(__name__)


class Admission:
    """Which Host and Origin header values a request may carry."""

    def __init__(self, config: HttpConfig):
        self.hosts = frozenset(_hosts(config))
        self.origins = frozenset(_origins(config))

    def host_ok(self, host: str | None) -> bool:
        if not host:
            return False
        name, _, port = _split_host(host.lower())
        if port and not port.isdigit():
            return False
        return _is_loopback_name(name) or host.lower() in self.hosts

    def origin_ok(self, origin: str | None) -> bool:
        # Browsers send Origin; MCP clients that are programs do not, and are judged by Host.
        return origin is None or origin.lower() in self.origins

    def sdk_settings(self) -> TransportSecuritySettings:
        """The same lists for the SDK transport's own check (a second line, never the first)."""
        return TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=[*(f"{n}:*" for n in LOOPBACK_NAMES), *LOOPBACK_NAMES, *self.hosts],
            allowed_origins=sorted(self.origins))


class HostOriginGuard:
    """Outermost: every request, on every route, needs an admitted Host and Origin (else 403)."""

    def __init__(self, app: ASGIApp, admission: Admission):
        self._app = app
        self._admission = admission

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = Headers(scope=scope)
            if not self._admission.host_ok(headers.get("host")):
                return await _refuse(send, 403, "forbidden: this server does not answer to that "
                                                "Host (DNS rebinding protection)")
            if not self._admission.origin_ok(headers.get("origin")):
                return await _refuse(send, 403, "forbidden: requests from that Origin are not "
                                                "accepted (use --allow-origin to admit one)")
        await self._app(scope, receive, send)


class McpRequestGate:
    """Inside authentication: each POST's body is read within a time and a size, parsed once
    (jsonrpc_input: a malformed message gets 400 here, never reaching the SDK), then held
    to the credential's limits (requests in flight, request rate, open sessions), and a tool
    call whose tool is not read-only is refused to a token without `memory:write`."""

    def __init__(self, app: ASGIApp, *, path: str, max_body: int, max_in_flight: int,
                 read_only: ReadOnly, resource_metadata: str | None, limits: Limits = Limits(),
                 sessions_of: SessionsOf = lambda who: 0):
        self._app = app
        self._path = path
        self._max_body = max_body
        self._max_in_flight = max_in_flight
        self._read_only = read_only
        self._metadata = resource_metadata
        self._limits = limits
        self._rate = RequestRate(limits.requests_per_minute)
        self._sessions_of = sessions_of
        self._in_flight: Counter[tuple] = Counter()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] != self._path or scope["method"] != "POST":
            return await self._app(scope, receive, send)
        user = scope.get("user")
        authenticated = isinstance(user, AuthenticatedUser)
        if "user" in scope and not authenticated:
            # Authentication is configured (it sets `user`) and no valid credential came:
            # 401 next, without reading a byte of the body.
            return await self._app(scope, receive, send)
        with anyio.move_on_after(self._limits.body_timeout_s) as waiting:
            body = await _read_body(scope, receive, self._max_body)
        if waiting.cancelled_caught:
            return await _refuse(send, 408, "request body not received within "
                                            f"{self._limits.body_timeout_s:g} s",
                                 headers=[(b"connection", b"close")])
        if body is None:
            return await _refuse(send, 413, f"request body over {self._max_body} bytes")
        try:
            message = parse_message(body)
        except MalformedMessage as exc:
            log.info("refused a malformed request: %s", exc)
            return await _refuse(send, 400, exc.message, request_id=exc.request_id,
                                 code=exc.code)
        if not authenticated:  # no authentication configured: loopback only, one user
            return await self._app(scope, _replay(body, receive), send)
        await self._admitted(scope, receive, send, body, message, user)

    async def _admitted(self, scope: Scope, receive: Receive, send: Send, body: bytes,
                        message: object, user: AuthenticatedUser) -> None:
        request_id = message.get("id") if isinstance(message, dict) else None
        tool = _tool_called(message)
        if (tool is not None and not may_change_memory(user.scopes)
                and await self._read_only(tool) is False):
            return await self._insufficient_scope(send, request_id, tool)
        principal = principal_components(user.access_token)
        wait_s = self._rate.admit(principal)
        if wait_s:
            return await _refuse(send, 429, "more than {} requests a minute for this token; "
                                            "retry later".format(self._limits.requests_per_minute),
                                 request_id=request_id,
                                 headers=[(b"retry-after", self._rate.retry_after(wait_s))])
        if (not Headers(scope=scope).get("mcp-session-id")
                and self._sessions_of(user) >= self._limits.max_sessions_per_token):
            return await _refuse(send, 429, f"this token already has "
                                            f"{self._limits.max_sessions_per_token} open sessions; "
                                            "end one (DELETE) or wait for one to expire",
                                 request_id=request_id, headers=[(b"retry-after", b"60")])
        if self._in_flight[principal] >= self._max_in_flight:
            return await _refuse(send, 429, f"more than {self._max_in_flight} requests in flight "
                                            "for this token; retry when one has finished",
                                 request_id=request_id, headers=[(b"retry-after", b"1")])
        self._in_flight[principal] += 1
        try:
            await self._app(scope, _replay(body, receive), send)
        finally:
            self._in_flight[principal] -= 1
            if self._in_flight[principal] <= 0:
                del self._in_flight[principal]

    async def _insufficient_scope(self, send: Send, request_id, tool: str) -> None:
        needed = f"{READ_SCOPE} {WRITE_SCOPE}"
        message = (f"forbidden: {tool} changes memory and needs scope {WRITE_SCOPE}; "
                   f"{READ_ONLY_TOKEN}")
        challenge = (f'Bearer error="insufficient_scope", scope="{needed}", '
                     f'error_description="{tool} needs {WRITE_SCOPE}"')
        if self._metadata:
            challenge += f', resource_metadata="{self._metadata}"'
        await _refuse(send, 403, message, request_id=request_id,
                      headers=[(b"www-authenticate", challenge.encode())])


def _tool_called(message: object) -> str | None:
    """The tool a tools/call message names (parse_message has checked its shape)."""
    if not isinstance(message, dict) or message.get("method") != "tools/call":
        return None
    name = message.get("params", {}).get("name")
    return name if isinstance(name, str) else None


async def _read_body(scope: Scope, receive: Receive, limit: int) -> bytes | None:
    """The whole request body, or None once it passes `limit` bytes (declared or received)."""
    declared = Headers(scope=scope).get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        return None
    body = bytearray()
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        body.extend(message.get("body", b""))
        if len(body) > limit:
            return None
        if not message.get("more_body", False):
            break
    return bytes(body)


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()
    return replayed


async def _refuse(send: Send, status: int, message: str, *, request_id=None,
                  code: int = INVALID_REQUEST,
                  headers: Iterable[tuple[bytes, bytes]] = ()) -> None:
    """A JSON-RPC error body, so a client shows the reason; `request_id` ties it to a call."""
    body = json.dumps({"jsonrpc": "2.0", "id": request_id,
                       "error": {"code": code, "message": message}}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode()), *headers]})
    await send({"type": "http.response.body", "body": body})


def _split_host(host: str) -> tuple[str, str, str]:
    """(name, ':', port) of a Host value; IPv6 names keep their brackets."""
    if host.startswith("["):
        name, _, rest = host.partition("]")
        return name + "]", ":" if rest else "", rest.removeprefix(":")
    return host.partition(":")


def _is_loopback_name(name: str) -> bool:
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name.strip("[]")).is_loopback
    except ValueError:
        return False


def _hosts(config: HttpConfig) -> Iterable[str]:
    host = f"[{config.host}]" if ":" in config.host else config.host
    yield f"{host}:{config.port}".lower()
    if config.public_url:
        parts = urlsplit(config.public_url)
        default = 443 if parts.scheme == "https" else 80
        name = parts.netloc.rpartition("@")[2].lower()
        yield name
        if parts.port is None:
            yield f"{name}:{default}"
        elif parts.port == default:
            yield _split_host(name)[0]


def _origins(config: HttpConfig) -> Iterable[str]:
    # The server's own loopback origin: no page is served from it, so no rebinding page has it.
    yield from (f"http://{name}:{config.port}" for name in LOOPBACK_NAMES)
    yield from (o.lower() for o in config.allowed_origins)
    if config.public_url:
        parts = urlsplit(config.public_url)
        yield f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}".lower()
