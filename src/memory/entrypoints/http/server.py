"""`ai-memory serve --http`: the MCP tools over Streamable HTTP, one process for every session.

One LazyApplication (one model, one index, one watcher) serves all sessions; what belongs
to a session (its MCP roots, its credential) travels with each request.
"""

from __future__ import annotations

import logging
import os
import socket
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from attrs import evolve
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.routes import (build_resource_metadata_url,
                                    create_protected_resource_routes)
from mcp.server.mcpserver import MCPServer
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp

from memory import __version__
from memory.domain.errors import Unavailable
from memory.domain.tokens import READ_SCOPE, WRITE_SCOPE
from memory.entrypoints.daemon import LocalDaemon, root_fingerprint
from memory.entrypoints.http.auth import verifier_for
from memory.entrypoints.http.config import MCP_PATH, STATUS_PATH, AuthMode, HttpConfig, Limits
from memory.entrypoints.http.guards import Admission, HostOriginGuard, McpRequestGate
from memory.entrypoints.http.limits import sessions_held, with_header_deadline
from memory.entrypoints.http.workspace import session_scoped
from memory.entrypoints.local_credential import CHALLENGE_HEADER, answer_challenge
from memory.entrypoints.mcp_roots import ClientRoots
from memory.entrypoints.mcp_server import LazyApplication, build_server

if TYPE_CHECKING:
    from memory.application.service import MemoryService
    from memory.application.browse.notes import NoteBrowser
    from memory.application.capture.service import CaptureService
    from memory.entrypoints.settings import Settings
    from memory.ports.token_store import TokenStore

log = logging.getLogger("memory.http")


class ToolHints:
    """Whether a tool is read-only, from the annotations the server lists (asked once)."""

    def __init__(self, server: MCPServer):
        self._server = server
        self._read_only: dict[str, bool] | None = None

    async def __call__(self, name: str) -> bool | None:
        if self._read_only is None:
            self._read_only = {t.name: bool(t.annotations and t.annotations.read_only_hint)
                               for t in await self._server.list_tools()}
        return self._read_only.get(name)


def build_http_app(service: Callable[[], MemoryService], config: HttpConfig, *,
                   warm: Callable[[], None] | None = None, store: TokenStore | None = None,
                   identity: str = "", browser: Callable[[], NoteBrowser] | None = None,
                   capture: Callable[[], CaptureService] | None = None,
                   refreshes: bool = True,
                   owner_secret: str | None = None) -> tuple[MCPServer, ASGIApp]:
    """The MCP server and the ASGI app serving it at /mcp behind the guards; `browser()`
    gives the notes offered as resources, as over stdio."""
    server = build_server(service, warm=warm, browser=browser, capture=capture,
                          refreshes=refreshes, **verifier_for(config, store, owner_secret))
    server.middleware.append(ClientRoots())  # per session; no process-wide roots over HTTP
    server.custom_route(STATUS_PATH, methods=["GET"])(
        _status_endpoint(identity, config, owner_secret))
    admission = Admission(config)
    app = server.streamable_http_app(
        streamable_http_path=MCP_PATH, transport_security=admission.sdk_settings(),
        host=config.host, max_request_body_size=config.max_body_bytes)
    metadata = None
    if config.auth is AuthMode.OAUTH:
        metadata = str(build_resource_metadata_url(config.resource_url))
        _publish_both_scopes(app, config)
    # Appended, so it runs inside the SDK's authentication and sees the credential's scopes.
    app.user_middleware.append(Middleware(
        McpRequestGate, path=MCP_PATH, max_body=config.max_body_bytes,
        max_in_flight=config.max_concurrent_per_token, read_only=ToolHints(server),
        resource_metadata=metadata, limits=config.limits,
        sessions_of=sessions_held(server.session_manager)))
    return server, HostOriginGuard(app, admission)


def _publish_both_scopes(app: Starlette, config: HttpConfig) -> None:
    """RFC 9728 metadata naming both scopes: the SDK's lists only the one every call needs,
    and a client must learn that it may ask for memory:write too."""
    routes = create_protected_resource_routes(
        resource_url=config.resource_url, authorization_servers=[config.oauth.issuer],
        scopes_supported=[READ_SCOPE, WRITE_SCOPE], resource_name="ai-memory")
    paths = {route.path for route in routes}
    app.router.routes[:] = [*routes, *(r for r in app.router.routes
                                      if getattr(r, "path", None) not in paths)]


def _status_endpoint(identity: str, config: HttpConfig, owner_secret: str | None):
    """Who serves, to a caller with a credential; to the owner's challenge, the proof that
    this server holds the owner's secret; to anyone else, 401 and nothing more."""
    async def status(request: Request) -> JSONResponse:
        if config.auth is AuthMode.NONE or isinstance(request.scope.get("user"),
                                                      AuthenticatedUser):
            return JSONResponse({"server": "ai-memory", "version": __version__,
                                 "pid": os.getpid(), "root_id": identity})
        if owner_secret is not None:
            proof = answer_challenge(owner_secret, request.headers.get(CHALLENGE_HEADER),
                                     config.port)
            if proof is not None:
                return JSONResponse({"proof": proof})
        return JSONResponse({"error": "unauthorized"}, status_code=401,
                            headers={"WWW-Authenticate": "Bearer"})
    return status


def serve_http(settings: Settings, config: HttpConfig,
               on_listening: Callable[[int], None] | None = None) -> int:
    """Serve until SIGINT/SIGTERM; `on_listening(port)` runs once the socket accepts."""
    import uvicorn  # here: the stdio server never needs it

    _log_to_stderr()
    sock = _listen(config.host, config.port)
    app = LazyApplication(evolve(settings, cwd=None), compose=session_scoped(settings))
    try:
        config = evolve(config, port=sock.getsockname()[1])  # port 0 asked for any free one
        store = _token_store(settings) if config.auth is AuthMode.TOKENS else None
        owner_secret = _owner_secret(settings, config)
        _server, asgi = build_http_app(app.service, config, warm=app.warm, store=store,
                                       identity=root_fingerprint(settings.root),
                                       browser=app.browser, capture=app.writes,
                                       refreshes=app.refreshes, owner_secret=owner_secret)
        log.info("ai-memory %s serving %s at %s (auth: %s)%s", __version__, settings.root,
                 config.resource_url, config.auth.value,
                 "" if settings.watch else " (not watching)")
        uv = uvicorn.Server(uvicorn.Config(
            asgi, log_level="warning", access_log=False, lifespan="on",
            timeout_graceful_shutdown=3, http=with_header_deadline(config.limits.header_timeout_s),
            # uvicorn answers 503 once connections reach the limit, its own one included.
            limit_concurrency=config.limits.max_connections + 1))
        if on_listening is not None:
            on_listening(config.port)
        uv.run(sockets=[sock])
    finally:
        app.close()
        sock.close()
    return 0


def _owner_secret(settings: Settings, config: HttpConfig) -> str | None:
    """The owner's local credential for --auth local (made on first use); a warning when
    the server is left open to every account of the machine."""
    if config.auth is AuthMode.NONE:
        log.warning("--auth none: every account on this machine can read and write this "
                    "memory through %s", config.resource_url)
    if config.auth is not AuthMode.LOCAL:
        return None
    from memory.adapters.statefiles import ensure_state_dir
    from memory.entrypoints.local_credential import credential_path, load_or_create
    secret = load_or_create(ensure_state_dir(settings.state_dir))
    log.info("clients send the secret in %s as a bearer token (`ai-memory connect` does)",
             credential_path(settings.state_dir))
    return secret


def _token_store(settings: Settings) -> TokenStore:
    from memory.adapters.statefiles import JsonTokenStore
    store = JsonTokenStore(settings.state_dir)
    if not store.all():
        log.warning("no API tokens yet: every request gets 401 until one is made with "
                    "`ai-memory token create --name NAME --scope read|write`")
    return store


def _listen(host: str, port: int) -> socket.socket:
    """Bind before serving, so the port is known (and recorded) even when 0 asked for any."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        return socket.create_server((host, port), family=family, backlog=512)
    except OSError as exc:
        raise Unavailable(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc


def _log_to_stderr() -> None:
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("memory").setLevel(logging.INFO)


def run_serve_http(args, settings: Settings) -> int:
    """`ai-memory serve --http ...` (and the daemon, which also records where it listens)."""
    config = HttpConfig.from_flags(
        args.http, auth="local" if args.daemon_record else args.auth, issuer=args.issuer, audience=args.audience, jwks=args.jwks,
        public_url=args.public_url, allow_origins=tuple(args.allow_origin),
        max_concurrent=args.max_concurrent, limits=Limits.from_flags(
            header_timeout_s=args.header_timeout, body_timeout_s=args.body_timeout,
            max_connections=args.max_connections,
            max_sessions_per_token=args.max_sessions_per_token,
            requests_per_minute=args.rate_limit))
    if not args.daemon_record:
        return serve_http(settings, config)
    daemon = LocalDaemon(settings.root, settings.state_dir)
    try:
        return serve_http(settings, config, on_listening=daemon.write_record)
    finally:
        daemon.clear_record()
