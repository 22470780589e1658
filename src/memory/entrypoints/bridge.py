"""`ai-memory connect`: a stdio MCP server for clients that relays every message to the root's
shared HTTP server (starting it when none answers), so all local clients share one process.

It understands just enough of Streamable HTTP to relay: the session id, the negotiated
protocol version, SSE and JSON answers, the standalone GET stream. When the server goes
away (killed, restarted, session expired) the next request starts it again and replays
the client's handshake, so the client keeps its session. Standard library only: no
model, no numpy, no SDK.
"""

from __future__ import annotations

import base64
import http.client
import json
import re
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import closing, suppress
from pathlib import Path
from typing import Any, BinaryIO, Protocol
from urllib.parse import urlencode, urlsplit

from memory.domain.errors import AiMemoryError, Unavailable
from memory.entrypoints.daemon import LocalDaemon
from memory.entrypoints.http.config import is_loopback, require_tls
from memory.entrypoints.local_credential import read_secret, require_server_holds
from memory.entrypoints.settings import (AUTO_SCOPE_ENV, REPOSITORY_ENV, WORKSPACE_HEADER,
                                         client_scope_settings, token_from)

ACCEPT_BOTH = "application/json, text/event-stream"
CONNECT_TIMEOUT_S = 10.0
DRAIN_TIMEOUT_S = 60.0  # for answers still due when the client closes stdin
# The 2026-07-28 envelope (no handshake) and its routing headers: mcp_types and
# mcp.shared.inbound spell them, but importing those would load pydantic into the bridge.
VERSION_META = "io.modelcontextprotocol/protocolVersion"
NAME_PARAMS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
_HEADER_SAFE = re.compile(r"^[\x20-\x7E]*$")
INTERNAL_ERROR = -32603


class Upstream(Protocol):
    def url(self) -> str:
        """The MCP endpoint to send to now."""

    def recover(self) -> str:
        """The endpoint to retry at after it failed (a local daemon is started again)."""

    def admit(self, conn: http.client.HTTPConnection) -> dict[str, str]:
        """The headers that authenticate a request on `conn`, once the server at its other
        end proved it is the one meant (Unavailable, with nothing sent, when it is not)."""


class DaemonUpstream:
    """The root's local daemon, started on first use and after it went away. Every
    connection to it is proven first: the port may be someone else's by now."""

    def __init__(self, daemon: LocalDaemon):
        self._daemon = daemon
        self._url: str | None = None

    def admit(self, conn: http.client.HTTPConnection) -> dict[str, str]:
        return _owner_admitted(conn, self._daemon.credential())

    def url(self) -> str:
        if self._url is None:
            self._url = self._daemon.ensure_running().url
        return self._url

    def recover(self) -> str:
        self._url = self._daemon.ensure_running().url
        return self._url


class FixedUpstream:
    """A server someone else runs (a team server): nothing to start, only to retry. Given
    the owner's local secret (a loopback server of this account), it proves each connection
    as the daemon's are."""

    def __init__(self, url: str, owner_secret: str | None = None):
        self._url = url
        self._owner_secret = owner_secret

    def admit(self, conn: http.client.HTTPConnection) -> dict[str, str]:
        return {} if self._owner_secret is None else _owner_admitted(conn, self._owner_secret)

    def url(self) -> str:
        return self._url

    def recover(self) -> str:
        return self._url


class StdioBridge:
    """Relays JSON-RPC lines on stdin to the upstream server and its messages to stdout."""

    def __init__(self, upstream: Upstream, stdin: BinaryIO, stdout: BinaryIO,
                 headers: dict[str, str] | None = None):
        self._upstream = upstream
        self._stdin = stdin
        self._stdout = stdout
        self._extra = dict(headers or {})
        self._out = threading.Lock()
        self._state = threading.Condition()
        self._session: str | None = None
        self._protocol: str | None = None
        # initialize and notifications/initialized, replayed in order after a restart
        self._handshake: dict[str, dict] = {}
        self._epoch = 0  # bumped each time a new upstream session replaces the old one
        self._closed = False
        self._listener: threading.Thread | None = None
        self._workers: list[threading.Thread] = []

    def run(self) -> int:
        for line in self._stdin:
            if line.strip():
                self._dispatch(line)
        # The client closed stdin: answer what it already asked, within reason, then go.
        deadline = time.monotonic() + DRAIN_TIMEOUT_S
        for worker in self._workers:
            worker.join(max(0.0, deadline - time.monotonic()))
        self._close()
        return 0

    # -- client -> server ------------------------------------------------------------------

    def _dispatch(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            self._write({"jsonrpc": "2.0", "id": None,
                         "error": {"code": -32700, "message": "Parse error"}})
            return
        method = message.get("method") if isinstance(message, dict) else None
        if method in ("initialize", "notifications/initialized"):
            self._handshake[method] = message
            self._send(message)
            if method == "notifications/initialized":
                self._start_listener()
        elif _requests(message):
            # Concurrently: a long call must not hold up the next one or its cancellation.
            worker = threading.Thread(target=self._send, args=(message,), daemon=True)
            self._workers = [w for w in self._workers if w.is_alive()] + [worker]
            worker.start()
        else:
            self._send(message)  # notifications and answers to the server, in order

    def _send(self, message: Any, retry: bool = True) -> None:
        epoch = self._epoch
        headers = self._headers(message, ACCEPT_BOTH)
        try:
            conn, response = self._open("POST", json.dumps(message).encode(), headers)
        except (OSError, http.client.HTTPException, AiMemoryError) as exc:
            # A failed initialize is simply sent again; anything later needs the handshake.
            if retry and self._recover(epoch, replay=not _is_method(message, "initialize")):
                return self._send(message, retry=False)
            return self._fail(message, f"cannot reach the ai-memory server: {exc}")
        with closing(conn):
            if response.status == 404 and "Mcp-Session-Id" in headers and retry:
                response.read()
                if self._recover(epoch):
                    return self._send(message, retry=False)
            if response.status >= 400:
                return self._fail(message, _error_text(response))
            if _is_method(message, "initialize"):
                self._session = response.getheader("mcp-session-id")
            answered = self._relay(response, message)
        if _requests(message) and not answered:
            self._fail(message, "the ai-memory server stopped before answering; call again "
                                "(the next call starts it again)")

    def _relay(self, response: http.client.HTTPResponse, message: Any) -> bool:
        """Write every message of the answer to stdout; True once each request was answered."""
        waiting = set(_request_ids(message))
        try:
            for reply in _messages(response):
                if isinstance(reply, dict) and "method" not in reply:
                    waiting.discard(_id_key(reply.get("id")))
                    self._note_initialized(message, reply)
                self._write(reply)
        except (OSError, http.client.HTTPException, ValueError):
            pass  # the server went away mid-answer: the caller reports what stays unanswered
        return not waiting

    def _note_initialized(self, message: Any, reply: dict) -> None:
        if _is_method(message, "initialize") and isinstance(reply.get("result"), dict):
            self._protocol = reply["result"].get("protocolVersion")

    # -- recovery --------------------------------------------------------------------------

    def _recover(self, epoch: int, replay: bool = True) -> bool:
        """A new upstream session in place of the lost one; False when none could be made."""
        with self._state:
            if self._epoch != epoch:
                return True  # another thread already recovered
            try:
                self._upstream.recover()
                self._session = None
                if replay:
                    self._replay_handshake()
            except (OSError, http.client.HTTPException, AiMemoryError, ValueError) as exc:
                print(f"ai-memory connect: cannot restore the session: {exc}", file=sys.stderr)
                return False
            self._epoch += 1
            self._state.notify_all()
            return True

    def _replay_handshake(self) -> None:
        for message in self._handshake.values():
            conn, response = self._open("POST", json.dumps(message).encode(),
                                        self._headers(message, ACCEPT_BOTH))
            with closing(conn):
                if response.status >= 400:
                    raise ValueError(f"the handshake was refused: {_error_text(response)}")
                if _is_method(message, "initialize"):
                    self._session = response.getheader("mcp-session-id")
                for reply in _messages(response):  # the client saw these answers already
                    if isinstance(reply, dict):
                        self._note_initialized(message, reply)

    # -- server -> client outside any request (the standalone GET stream) --------------------

    def _start_listener(self) -> None:
        if self._listener is None:
            self._listener = threading.Thread(target=self._listen, daemon=True)
            self._listener.start()

    def _listen(self) -> None:
        while not self._closed:
            epoch = self._epoch
            if self._session is not None:
                try:
                    conn, response = self._open("GET", None, self._headers(None, "text/event-stream"))
                except (OSError, http.client.HTTPException, AiMemoryError):
                    conn = response = None
                if response is not None:
                    with closing(conn):
                        if response.status == 405:
                            return  # the server offers no standalone stream
                        if response.status == 200:
                            with suppress(OSError, http.client.HTTPException, ValueError):
                                for message in _messages(response):
                                    self._write(message)
            with self._state:
                self._state.wait_for(lambda: self._epoch != epoch or self._closed, timeout=1.0)

    # -- plumbing --------------------------------------------------------------------------

    def _headers(self, message: Any, accept: str) -> dict[str, str]:
        headers = {"Accept": accept, **self._extra}
        if message is not None:
            headers["Content-Type"] = "application/json"
        version = _envelope_version(message)
        if version is not None:  # 2026-07-28: every request stands alone, no session
            headers.update(_routing_headers(message, version))
            return headers
        if self._session:
            headers["Mcp-Session-Id"] = self._session
        if self._protocol:
            headers["MCP-Protocol-Version"] = self._protocol
        return headers

    def _open(self, method: str, body: bytes | None,
              headers: dict[str, str]) -> tuple[http.client.HTTPConnection, Any]:
        parts = urlsplit(self._upstream.url())
        kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        conn = kind(parts.hostname, parts.port, timeout=CONNECT_TIMEOUT_S)
        try:
            headers = {**headers, **self._upstream.admit(conn)}
            conn.request(method, parts.path + (f"?{parts.query}" if parts.query else ""),
                         body=body, headers=headers)
            conn.sock.settimeout(None)  # a tool call, or the GET stream, may last long
            return conn, conn.getresponse()
        except BaseException:
            conn.close()
            raise

    def _write(self, message: Any) -> None:
        data = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        with self._out:
            self._stdout.write(data + b"\n")
            self._stdout.flush()

    def _fail(self, message: Any, text: str) -> None:
        """Answer each request in `message` with a JSON-RPC error, so no call hangs."""
        for request_id in _request_ids(message, raw=True):
            self._write({"jsonrpc": "2.0", "id": request_id,
                         "error": {"code": INTERNAL_ERROR, "message": text}})
        if not _requests(message):
            print(f"ai-memory connect: {text}", file=sys.stderr)

    def _close(self) -> None:
        self._closed = True
        with self._state:
            self._state.notify_all()
        if self._session is None:
            return
        with suppress(OSError, http.client.HTTPException, AiMemoryError):
            conn, response = self._open("DELETE", None, self._headers(None, ACCEPT_BOTH))
            with closing(conn):
                response.read()


def _messages(response: http.client.HTTPResponse) -> Iterator[Any]:
    """The JSON-RPC messages of an answer: one JSON body, or the events of an SSE stream."""
    kind = (response.getheader("content-type") or "").lower()
    if kind.startswith("application/json"):
        body = response.read()
        if body.strip():
            yield json.loads(body)
        return
    if not kind.startswith("text/event-stream"):
        response.read()
        return
    data: list[str] = []
    for raw in iter(response.readline, b""):
        line = raw.decode("utf-8").rstrip("\r\n")
        if not line:
            text = "\n".join(data)
            data = []
            if text.strip():
                yield json.loads(text)
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))


def _requests(message: Any) -> bool:
    return bool(_request_ids(message))


def _request_ids(message: Any, raw: bool = False) -> list:
    items = message if isinstance(message, list) else [message]
    ids = [m.get("id") for m in items if isinstance(m, dict) and "method" in m and "id" in m]
    return ids if raw else [_id_key(i) for i in ids]


def _id_key(value: Any) -> str:
    return json.dumps(value)  # 1 and "1" are different ids


def _is_method(message: Any, method: str) -> bool:
    return isinstance(message, dict) and message.get("method") == method


def _envelope_version(message: Any) -> str | None:
    if not isinstance(message, dict) or not isinstance(message.get("params"), dict):
        return None
    meta = message["params"].get("_meta")
    version = meta.get(VERSION_META) if isinstance(meta, dict) else None
    return version if isinstance(version, str) else None


def _routing_headers(message: dict, version: str) -> dict[str, str]:
    headers = {"MCP-Protocol-Version": version, "Mcp-Method": str(message.get("method"))}
    key = NAME_PARAMS.get(message.get("method"))
    name = message["params"].get(key) if key else None
    if isinstance(name, str):
        headers["Mcp-Name"] = _header_value(name)
    return headers


def _header_value(value: str) -> str:
    """Printable ASCII as is, anything else in the spec's `=?base64?...?=` wrapping."""
    if _HEADER_SAFE.match(value) and value == value.strip() and not value.startswith("=?base64?"):
        return value
    return f"=?base64?{base64.b64encode(value.encode('utf-8')).decode('ascii')}?="


def _error_text(response: http.client.HTTPResponse) -> str:
    """What a refusal says: its JSON-RPC error message when it has one, else its status."""
    body = response.read(65536)
    try:
        message = json.loads(body)["error"]["message"]
    except (ValueError, KeyError, TypeError):
        message = body.decode("utf-8", "replace").strip()[:300] or response.reason
    return f"HTTP {response.status}: {message}"


def workspace_header(cwd: Path | None, env: dict[str, str]) -> dict[str, str]:
    """The client entry's own view of its workspace, for the shared server (see mcp_roots)."""
    fields = {}
    if cwd is not None:
        fields["folder"] = cwd.as_uri()
    if env.get(REPOSITORY_ENV, "").strip():
        fields["repository"] = env[REPOSITORY_ENV].strip()
    if env.get(AUTO_SCOPE_ENV, "").strip():
        fields["auto_scope"] = env[AUTO_SCOPE_ENV].strip()
    return {WORKSPACE_HEADER: urlencode(fields)} if fields else {}


def _owner_admitted(conn: http.client.HTTPConnection, secret: str | None) -> dict[str, str]:
    if secret is None:
        raise Unavailable("no local credential yet (the daemon makes it when it starts)")
    require_server_holds(conn, secret)
    return {"Authorization": f"Bearer {secret}"}


def run_connect(settings, url: str | None, token_env: str | None) -> int:
    """Bridge stdin/stdout to `url`, or to the local daemon of `settings.root`; a loopback
    `url` without --token-env gets the owner's local credential of `settings`, if any."""
    if url is not None:
        require_tls(url, "--url", "the bearer token and every note read or written")
    headers = {}
    local = url is None or is_loopback(urlsplit(url).hostname or "")
    if local:  # a folder path means nothing to another machine
        headers.update(workspace_header(_cwd(), client_scope_settings()))
    if token_env:
        token = token_from(token_env)
        if not token:
            raise AiMemoryError(f"--token-env {token_env}: that environment variable is empty")
        headers["Authorization"] = f"Bearer {token}"
    if url is None:
        upstream: Upstream = DaemonUpstream(LocalDaemon(settings.root, settings.state_dir))
    else:
        owner = read_secret(settings.state_dir) if local and settings and not token_env else None
        upstream = FixedUpstream(url, owner)
    return StdioBridge(upstream, sys.stdin.buffer, sys.stdout.buffer, headers).run()


def _cwd() -> Path | None:
    try:
        return Path.cwd()
    except OSError:  # started in a folder that was deleted since
        return None
