"""`serve --http --auth tokens|oauth` as a real process: who gets in, who is refused, and how."""

from __future__ import annotations

import base64
import hashlib
import hmac
import http.server
import json
import stat
import sys
import threading
import time
from pathlib import Path

import anyio
import httpx2
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from http_harness import cli, http_server, make_root, mcp_session, server_env
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from memory.domain.tokens import READ_ONLY_TOKEN

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "auth-test", "version": "0"}}}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
ISSUER = "https://issuer.example.test"
AUDIENCE = "https://memory.example.test/mcp"


@pytest.fixture(scope="module")
def anyio_backend():
    return "asyncio"


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    return make_root(tmp_path_factory.mktemp("auth"))


def create_token(root: Path, name: str, scope: str) -> str:
    done = cli("token", "create", "--root", str(root), "--name", name, "--scope", scope)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def post(url: str, body: dict | bytes, token: str | None = None, **headers) -> httpx2.Response:
    sent = {**ACCEPT, **headers, **({"Authorization": f"Bearer {token}"} if token else {})}
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return httpx2.post(url, content=content, headers=sent, timeout=60)


@pytest.fixture(scope="module")
def tokens(root):
    return {"reader": create_token(root, "reader", "read"),
            "writer": create_token(root, "writer", "write"),
            "doomed": create_token(root, "doomed", "write")}


@pytest.fixture(scope="module")
def token_server(root, tokens, tmp_path_factory):
    log = tmp_path_factory.mktemp("logs") / "tokens.stderr"
    with http_server(root, log, "--no-watch", "--auth", "tokens") as served:
        yield served


# -- tokens -------------------------------------------------------------------------------

def test_the_token_file_keeps_salted_hashes_only_and_is_owner_only(root, tokens):
    path = root / ".ai-memory" / "tokens.json"
    text = path.read_text()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    for token in tokens.values():
        assert token.startswith("aim_") and token not in text
        assert token.split("_", 2)[2] not in text  # not even the secret part
    listed = cli("token", "list", "--root", str(root), "--json")
    assert {t["name"]: t["scope"] for t in json.loads(listed.stdout)} == {
        "reader": "read", "writer": "write", "doomed": "write"}
    assert not any(t in listed.stdout for t in tokens.values())


@pytest.mark.parametrize("credential", [None, "aim_0123456789abcdef_wrong", "not-a-token",
                                        "aim_zz_short"])
def test_no_or_a_wrong_token_gets_401_with_a_bearer_challenge(token_server, credential):
    response = post(token_server.url, INIT, credential)
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer ")
    assert credential is None or credential not in response.text


@pytest.mark.anyio
async def test_a_read_token_reads_and_is_refused_every_tool_that_is_not_read_only(
        token_server, tokens):
    async with mcp_session(token_server.url,
                           headers={"Authorization": f"Bearer {tokens['reader']}"}) as session:
        found = await session.call_tool("memory_search", {"query": "rollback plan"})
        assert not found.is_error
        for name, arguments in [("memory_refresh", {}),
                                ("memory_feedback", {"query": "q", "memory_id": "beta-deploy",
                                                     "relevance": "relevant"}),
                               ("memory_write", {"title": "Reader note", "body": "x",
                                                 "repository": "alpha"}),
                               ("memory_edit", {"identity": "beta-deploy",
                                                "content_hash": "0" * 64,
                                                "operation": "archive"})]:
            with pytest.raises(MCPError) as refused:
                with anyio.fail_after(60):
                    await session.call_tool(name, arguments)
            assert "forbidden" in str(refused.value) and name in str(refused.value)
    raw = post(token_server.url, {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                                  "params": {"name": "memory_refresh", "arguments": {}}},
               tokens["reader"])
    assert raw.status_code == 403
    challenge = raw.headers["www-authenticate"]
    assert 'error="insufficient_scope"' in challenge and "memory:write" in challenge
    assert raw.json()["id"] == 7 and "memory_refresh" in raw.json()["error"]["message"]
    assert READ_ONLY_TOKEN in raw.json()["error"]["message"]  # as memory_health says it
    assert tokens["reader"] not in raw.text


@pytest.mark.anyio
async def test_health_tells_each_token_whether_it_may_write(token_server, tokens):
    seen = {}
    for name in ("reader", "writer"):
        async with mcp_session(token_server.url,
                               headers={"Authorization": f"Bearer {tokens[name]}"}) as session:
            with anyio.fail_after(120):
                health = await session.call_tool("memory_health", {})
            assert not health.is_error, health.content
            seen[name] = health.structured_content["writes"], health.content[0].text
    assert seen["writer"][0] == {"enabled": True, "git_commit": False}
    assert "writes: on" in seen["writer"][1]
    # The reason is the scope guard's own, which refuses this token memory_write.
    assert seen["reader"][0] == {"enabled": False, "git_commit": False,
                                 "reason": READ_ONLY_TOKEN}
    assert f"writes: off ({READ_ONLY_TOKEN})" in seen["reader"][1]


@pytest.mark.anyio
async def test_a_write_token_may_refresh(token_server, tokens):
    async with mcp_session(token_server.url,
                           headers={"Authorization": f"Bearer {tokens['writer']}"}) as session:
        with anyio.fail_after(300):
            result = await session.call_tool("memory_refresh", {"mode": "index"})
        assert not result.is_error, result.content


@pytest.mark.anyio
async def test_a_stdio_client_reaches_a_team_server_through_the_bridge(token_server, tokens,
                                                                     tmp_path):
    params = StdioServerParameters(
        command=sys.executable, env=server_env(AIM_TOKEN=tokens["reader"]),
        args=["-m", "memory", "connect", "--url", token_server.url, "--token-env", "AIM_TOKEN"])
    with (tmp_path / "bridge.stderr").open("w") as err:
        async with stdio_client(params, errlog=err) as (read, write):
            async with ClientSession(read, write) as session:
                with anyio.fail_after(120):
                    await session.initialize()
                    found = await session.call_tool("memory_search", {"query": "rollback plan"})
                    assert not found.is_error and found.structured_content["items"]
                    with pytest.raises(MCPError, match="HTTP 403: forbidden: memory_refresh"):
                        await session.call_tool("memory_refresh", {})
    assert tokens["reader"] not in (tmp_path / "bridge.stderr").read_text()


def test_a_revoked_token_is_refused_by_the_running_server(token_server, tokens, root):
    assert post(token_server.url, INIT, tokens["doomed"]).status_code == 200
    done = cli("token", "revoke", "--root", str(root), "doomed")
    assert done.returncode == 0, done.stderr
    assert post(token_server.url, INIT, tokens["doomed"]).status_code == 401
    assert cli("token", "revoke", "--root", str(root), "doomed").returncode == 3


def test_a_session_answers_only_the_token_that_opened_it(token_server, tokens):
    opened = post(token_server.url, INIT, tokens["writer"])
    session = {"Mcp-Session-Id": opened.headers["mcp-session-id"],
               "MCP-Protocol-Version": "2025-06-18"}
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    assert post(token_server.url, ping, tokens["reader"], **session).status_code == 404
    assert post(token_server.url, ping, tokens["writer"], **session).status_code == 200


def test_an_oversized_body_gets_413_before_anything_reads_it(token_server, tokens):
    big = b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"' + b"x" * (3 << 20) + b'"}}'
    response = post(token_server.url, big, tokens["writer"])
    assert response.status_code == 413


def test_no_token_reaches_the_log(token_server, tokens):
    for token in tokens.values():
        post(token_server.url, INIT, token)
        post(token_server.url, INIT, token[:-3] + "abc")  # a near miss is refused, not echoed
    log = token_server.log
    assert log.strip()  # the server did log (its start line at least)
    for token in tokens.values():
        assert token not in log and token.split("_", 2)[2] not in log


# -- OAuth resource server ------------------------------------------------------------------

class Issuer:
    """A test authorization server's signing key and its published JWK Set."""

    def __init__(self, kid: str = "test-key"):
        self.kid = kid
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)

    def jwks(self) -> dict:
        public = jwt.algorithms.RSAAlgorithm.to_jwk(self.key.public_key(), as_dict=True)
        return {"keys": [{**public, "kid": self.kid, "use": "sig", "alg": "RS256"}]}

    def public_pem(self) -> bytes:
        return self.key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)

    def token(self, scope: str = "memory:read", **changes) -> str:
        now = int(time.time())
        claims = {"iss": ISSUER, "aud": AUDIENCE, "sub": "alice", "client_id": "agent",
                  "iat": now, "exp": now + 600, "scope": scope, **changes}
        claims = {k: v for k, v in claims.items() if v is not None}
        return jwt.encode(claims, self.key, algorithm="RS256", headers={"kid": self.kid})


@pytest.fixture(scope="module")
def issuer() -> Issuer:
    return Issuer()


@pytest.fixture(scope="module")
def oauth_server(root, issuer, tmp_path_factory):
    folder = tmp_path_factory.mktemp("oauth")
    (folder / "jwks.json").write_text(json.dumps(issuer.jwks()))
    with http_server(root, folder / "serve.stderr", "--no-watch", "--auth", "oauth",
                     "--issuer", ISSUER, "--audience", AUDIENCE,
                     "--jwks", str(folder / "jwks.json")) as served:
        yield served


def test_protected_resource_metadata_is_published(oauth_server):
    metadata_url = oauth_server.url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")
    metadata = httpx2.get(metadata_url, timeout=30).json()
    assert metadata["resource"] == oauth_server.url
    assert metadata["authorization_servers"] == [ISSUER]
    assert metadata["scopes_supported"] == ["memory:read", "memory:write"]
    challenge = post(oauth_server.url, INIT).headers["www-authenticate"]
    assert f'resource_metadata="{metadata_url}"' in challenge


def test_a_token_of_the_issuer_for_this_audience_is_served(oauth_server, issuer):
    response = post(oauth_server.url, INIT, issuer.token())
    assert response.status_code == 200 and response.headers["mcp-session-id"]


def _forged(issuer: Issuer) -> dict[str, str]:
    now = int(time.time())
    claims = {"iss": ISSUER, "aud": AUDIENCE, "sub": "mallory", "exp": now + 600,
              "scope": "memory:read memory:write"}
    return {
        "wrong audience": issuer.token(aud="https://other.example.test/mcp"),
        "wrong issuer": issuer.token(iss="https://evil.example.test"),
        "expired": issuer.token(exp=now - 3600, iat=now - 7200),
        "no expiry": issuer.token(exp=None),
        "unsigned (alg none)": jwt.encode(claims, None, algorithm="none"),
        "HS256 keyed with the public key": _hs256(claims, issuer),
        "signed by another key": Issuer(kid=issuer.kid).token(),
        # The issuer's own key, but its JWK says RS256: no other algorithm may use it.
        "PS256 with the RS256 key": jwt.encode({**claims, "sub": "alice"}, issuer.key,
                                               algorithm="PS256", headers={"kid": issuer.kid}),
        "garbage": "eyJhbGciOiJSUzI1NiJ9.bm90IGpzb24.c2ln",
    }


def _hs256(claims: dict, issuer: Issuer) -> str:
    """The algorithm-confusion forgery: HMAC keyed with the issuer's public key, by hand
    (PyJWT itself refuses to HMAC with a PEM key)."""
    def b64(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()
    head = b64(json.dumps({"alg": "HS256", "typ": "JWT", "kid": issuer.kid}).encode())
    body = b64(json.dumps(claims).encode())
    mac = hmac.new(issuer.public_pem(), f"{head}.{body}".encode(), hashlib.sha256).digest()
    return f"{head}.{body}.{b64(mac)}"


@pytest.mark.parametrize("case", ["wrong audience", "wrong issuer", "expired", "no expiry",
                                  "unsigned (alg none)", "HS256 keyed with the public key",
                                  "signed by another key", "PS256 with the RS256 key",
                                  "garbage"])
def test_a_bad_jwt_gets_401(oauth_server, issuer, case):
    token = _forged(issuer)[case]
    response = post(oauth_server.url, INIT, token)
    assert response.status_code == 401, case
    assert 'error="invalid_token"' in response.headers["www-authenticate"]
    assert token not in response.text and token not in oauth_server.log


def test_an_oauth_read_token_gets_a_scope_challenge_for_a_write_tool(oauth_server, issuer):
    call = {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "memory_refresh", "arguments": {}}}
    refused = post(oauth_server.url, call, issuer.token("memory:read"))
    assert refused.status_code == 403
    challenge = refused.headers["www-authenticate"]
    assert 'error="insufficient_scope"' in challenge and "resource_metadata=" in challenge


def test_keys_fetched_from_a_jwks_url_when_one_is_configured(root, issuer, tmp_path):
    (tmp_path / "jwks.json").write_text(json.dumps(issuer.jwks()))
    fetched: list[str] = []

    class Keys(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(tmp_path), **kwargs)

        def log_message(self, *args):
            fetched.append(self.path)
    keys = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Keys)
    threading.Thread(target=keys.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{keys.server_address[1]}/jwks.json"
    try:
        with http_server(root, tmp_path / "serve.stderr", "--no-watch", "--auth", "oauth",
                         "--issuer", ISSUER, "--audience", AUDIENCE, "--jwks", url) as served:
            assert not fetched  # nothing is fetched before a token needs checking
            assert post(served.url, INIT, issuer.token()).status_code == 200
            assert post(served.url, INIT, issuer.token()).status_code == 200
            assert post(served.url, INIT, Issuer(kid="other").token()).status_code == 401
    finally:
        keys.shutdown()
    assert fetched and fetched[0] == "/jwks.json"
    assert len(fetched) <= 2  # cached: at most one refetch, for the unknown key id
