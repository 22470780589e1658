"""The ASGI guards, called directly: body size, per-token concurrency, tool scopes, no echo."""

import json
import logging

import anyio
import pytest
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken

from memory.adapters.inmemory import InMemoryTokenStore
from memory.domain.tokens import ApiToken, TokenScope, bearer_value
from memory.entrypoints.http.auth import StoreTokenVerifier
from memory.entrypoints.http.config import HttpConfig, Limits
from memory.entrypoints.http.guards import Admission, HostOriginGuard, McpRequestGate
from memory.domain.errors import InvalidRequest
from memory.ports.errors import StoreError

SECRET = "s3cret-s3cret-s3cret"
TOKEN = bearer_value("0123456789abcdef", SECRET)
READ_ONLY = {"memory_search": True, "memory_refresh": False}


@pytest.fixture
def anyio_backend():
    return "asyncio"


class Inner:
    """The app behind the gate: records what reached it; can be held to keep requests open."""

    def __init__(self):
        self.bodies: list[bytes] = []
        self.release = anyio.Event()
        self.hold = False

    async def __call__(self, scope, receive, send):
        message = await receive()
        self.bodies.append(message.get("body", b""))
        if self.hold:
            await self.release.wait()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})


def user(*scopes: str, name: str = "reader") -> AuthenticatedUser:
    return AuthenticatedUser(AccessToken(token=TOKEN, client_id=name, subject=name,
                                         scopes=list(scopes)))


async def read_only(name: str):
    return READ_ONLY.get(name)


def gate(inner, **overrides) -> McpRequestGate:
    options = {"path": "/mcp", "max_body": 1000, "max_in_flight": 2, "read_only": read_only,
               "resource_metadata": None, **overrides}
    return McpRequestGate(inner, **options)


NO_AUTH = object()  # no authentication configured: the scope carries no `user` at all


async def call(app, body: bytes, *, who=None, method="POST", path="/mcp", headers=()):
    scope = {"type": "http", "method": method, "path": path, "user": who,
             "headers": [(b"content-type", b"application/json"), *headers]}
    if who is NO_AUTH:
        del scope["user"]
    chunks = [body[i:i + 300] for i in range(0, len(body), 300)] or [b""]
    sent = []

    async def receive():
        chunk = chunks.pop(0) if chunks else b""
        return {"type": "http.request", "body": chunk, "more_body": bool(chunks)}

    async def send(message):
        sent.append(message)
    await app(scope, receive, send)
    head = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return head["status"], dict(head["headers"]), body


def tool_call(name: str, request_id=1) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                       "params": {"name": name, "arguments": {}}}).encode()


@pytest.mark.anyio
async def test_a_body_over_the_limit_is_refused_declared_or_streamed_once_authenticated():
    inner = Inner()
    who = user("memory:read")
    status, _, _ = await call(gate(inner), b"x" * 1001, who=who)
    assert status == 413
    status, _, _ = await call(gate(inner), b"{}", headers=[(b"content-length", b"5000")],
                              who=who)
    assert status == 413
    status, _, _ = await call(gate(inner), tool_call("memory_search"), who=who)
    assert status == 200 and inner.bodies == [tool_call("memory_search")]  # replayed whole
    status, _, _ = await call(gate(inner), b"x" * 1001)  # unauthenticated: not read here
    assert status == 200 and inner.bodies[-1] == b"x" * 300


@pytest.mark.anyio
async def test_a_read_token_is_refused_a_tool_that_is_not_read_only_with_a_scope_challenge():
    inner = Inner()
    app = gate(inner, resource_metadata="https://m.example/.well-known/oauth-protected-resource")
    status, headers, body = await call(app, tool_call("memory_refresh", 9),
                                       who=user("memory:read"))
    assert status == 403 and not inner.bodies
    challenge = headers[b"www-authenticate"].decode()
    assert 'error="insufficient_scope"' in challenge
    assert 'scope="memory:read memory:write"' in challenge and "resource_metadata=" in challenge
    refused = json.loads(body)
    assert refused["id"] == 9 and "memory_refresh" in refused["error"]["message"]
    batch = b"[" + tool_call("memory_search", 1) + b"," + tool_call("memory_refresh", 2) + b"]"
    assert (await call(app, batch, who=user("memory:read")))[0] == 400  # MCP has no batches
    assert not inner.bodies


@pytest.mark.anyio
async def test_read_only_and_unknown_tools_pass_and_a_write_token_passes_everything():
    inner = Inner()
    reader, writer = user("memory:read"), user("memory:read", "memory:write", name="writer")
    assert (await call(gate(inner), tool_call("memory_search"), who=reader))[0] == 200
    assert (await call(gate(inner), tool_call("no_such_tool"), who=reader))[0] == 200
    assert (await call(gate(inner), tool_call("memory_refresh"), who=writer))[0] == 200
    assert (await call(gate(inner), tool_call("memory_refresh")))[0] == 200  # no auth: local


@pytest.mark.anyio
async def test_a_token_may_hold_only_so_many_requests_in_flight_and_others_are_not_counted():
    inner = Inner()
    inner.hold = True
    app = gate(inner, max_in_flight=2)
    results = []

    async def one(who):
        results.append((who.access_token.client_id, (await call(app, tool_call("x"), who=who))[0]))
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(one, user("memory:read"))
        tasks.start_soon(one, user("memory:read"))
        while len(inner.bodies) < 2:
            await anyio.sleep(0)
        status, headers, body = await call(app, tool_call("x", 5), who=user("memory:read"))
        assert status == 429 and headers[b"retry-after"] == b"1"
        assert json.loads(body)["id"] == 5
        tasks.start_soon(one, user("memory:read", name="someone-else"))  # not counted with ci
        while len(inner.bodies) < 3:
            await anyio.sleep(0)
        inner.release.set()
    assert sorted(results) == [("reader", 200), ("reader", 200), ("someone-else", 200)]
    assert (await call(app, tool_call("x"), who=user("memory:read")))[0] == 200  # freed again


@pytest.mark.anyio
async def test_the_host_origin_guard_answers_403_on_every_route():
    inner = Inner()
    app = HostOriginGuard(inner, Admission(HttpConfig.from_flags("127.0.0.1:8765")))
    for path in ("/mcp", "/ai-memory/status", "/.well-known/oauth-protected-resource/mcp"):
        evil_host = await call(app, b"", path=path, method="GET",
                               headers=[(b"host", b"evil.example.com")])
        evil_origin = await call(app, b"", path=path, method="GET",
                                 headers=[(b"host", b"127.0.0.1:8765"),
                                          (b"origin", b"http://evil.example.com")])
        assert evil_host[0] == 403 and evil_origin[0] == 403, path
    assert (await call(app, b"", headers=[(b"host", b"localhost:8765")]))[0] == 200
    assert len(inner.bodies) == 1


def store_with(scope: TokenScope) -> InMemoryTokenStore:
    store = InMemoryTokenStore()
    store.add(ApiToken.issue(name="ci", scope=scope, token_id="0123456789abcdef",
                             secret=SECRET, salt=bytes(16), created="now"))
    return store


@pytest.mark.anyio
async def test_the_store_verifier_grants_the_tokens_scope_and_forgets_a_revoked_one():
    store = store_with(TokenScope.READ)
    verifier = StoreTokenVerifier(store)
    granted = await verifier.verify_token(TOKEN)
    assert granted.client_id == "ci" and granted.scopes == ["memory:read"]
    assert await verifier.verify_token(TOKEN[:-1] + "x") is None
    assert await verifier.verify_token("aim_ffffffffffffffff_" + SECRET) is None
    assert await verifier.verify_token("eyJhbGciOiJub25lIn0.e30.") is None
    store.remove("ci")
    assert await verifier.verify_token(TOKEN) is None


class BrokenStore(InMemoryTokenStore):
    def find(self, token_id):
        raise StoreError("tokens.json is unreadable")


@pytest.mark.anyio
async def test_no_token_is_logged_or_echoed_even_at_debug_level(caplog):
    caplog.set_level(logging.DEBUG)
    inner = Inner()
    near_miss = TOKEN[:-1] + "x"
    verifiers = [StoreTokenVerifier(store_with(TokenScope.READ)), StoreTokenVerifier(BrokenStore())]
    bodies = []
    for verifier in verifiers:
        for presented in (TOKEN, near_miss):
            granted = await verifier.verify_token(presented)
            who = AuthenticatedUser(granted) if granted else None
            for payload in (tool_call("memory_refresh"), b"x" * 2000):
                bodies.append((await call(gate(inner), payload, who=who))[2])
    assert "tokens.json is unreadable" in caplog.text  # the broken store was reported
    for text in (caplog.text, *map(bytes.decode, bodies)):
        assert SECRET not in text and near_miss not in text


MALFORMED = [b'{"jsonrpc":"2.0","id":4,"method":"ping","params":' + b"[" * 100_000 + b"]" * 100_000
             + b"}", b'{"jsonrpc":"2.0","id":4,"method":"ping","params":{"n":1e999999}}',
             b'{"jsonrpc":"2.0","id":4,"method":"ping","params":{"s":"\xff"}}',
             b'{"jsonrpc":"2.0","id":4,"id":5,"method":"ping"}',
             b'{"jsonrpc":"2.0","id":4,"method":"tools/call","params":["memory_search"]}']


@pytest.mark.anyio
@pytest.mark.parametrize("who", [NO_AUTH, user("memory:read", "memory:write")],
                         ids=["no-auth", "token"])
@pytest.mark.parametrize("body", MALFORMED, ids=["deep", "huge-number", "not-utf8",
                                                 "repeated-key", "params-a-list"])
async def test_a_malformed_body_gets_400_before_the_transport_sees_it(body, who):
    inner = Inner()
    status, _, answer = await call(gate(inner, max_body=300_000), body, who=who)
    error = json.loads(answer)
    assert status == 400 and error["error"]["code"] in (-32700, -32600) and not inner.bodies
    assert await call(gate(inner), tool_call("memory_search"), who=who) == (200, {}, b"{}")


@pytest.mark.anyio
async def test_without_a_valid_credential_no_byte_of_the_body_is_read():
    inner = Inner()
    assert (await call(gate(inner), MALFORMED[0], who=None))[0] == 200  # 401 comes next
    assert inner.bodies == [MALFORMED[0][:300]]  # read by the app behind, not by the gate


@pytest.mark.anyio
async def test_a_body_slower_than_the_limit_gets_408_and_the_connection_closes():
    scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": []}
    sent = []

    async def trickle():
        await anyio.sleep(0.3)
        return {"type": "http.request", "body": b"{", "more_body": True}

    async def send(message):
        sent.append(message)
    app = gate(Inner(), limits=Limits(body_timeout_s=1))
    with anyio.fail_after(30):
        await app(scope, trickle, send)
    assert sent[0]["status"] == 408 and (b"connection", b"close") in sent[0]["headers"]


@pytest.mark.anyio
async def test_a_token_over_its_request_rate_gets_429_with_retry_after_and_others_do_not():
    inner = Inner()
    app = gate(inner, limits=Limits(requests_per_minute=3))
    flooder, other = user("memory:read", name="flood"), user("memory:read", name="other")
    statuses = [(await call(app, tool_call("x"), who=flooder))[0] for _ in range(5)]
    assert statuses == [200, 200, 200, 429, 429]
    status, headers, body = await call(app, tool_call("x", 8), who=flooder)
    assert status == 429 and int(headers[b"retry-after"]) >= 1
    assert json.loads(body)["id"] == 8 and "3 requests a minute" in body.decode()
    assert (await call(app, tool_call("x"), who=other))[0] == 200


@pytest.mark.anyio
async def test_a_token_holding_its_sessions_may_not_open_another_but_may_use_them():
    held = {"flood": 2, "other": 0}
    app = gate(Inner(), limits=Limits(max_sessions_per_token=2),
               sessions_of=lambda who: held[who.access_token.client_id])
    flooder = user("memory:read", name="flood")
    status, headers, body = await call(app, tool_call("x"), who=flooder)
    assert status == 429 and headers[b"retry-after"] and "2 open sessions" in body.decode()
    in_session = [(b"mcp-session-id", b"abc")]
    assert (await call(app, tool_call("x"), who=flooder, headers=in_session))[0] == 200
    assert (await call(app, tool_call("x"), who=user("memory:read", name="other")))[0] == 200


def test_a_limit_of_zero_or_less_is_refused_naming_its_flag():
    with pytest.raises(InvalidRequest, match="--rate-limit must be above 0"):
        Limits.from_flags(requests_per_minute=0)
    with pytest.raises(InvalidRequest, match="--header-timeout must be above 0"):
        Limits.from_flags(header_timeout_s=-1.0)
    assert Limits.from_flags(body_timeout_s=2.5, max_connections=None) == Limits(body_timeout_s=2.5)
