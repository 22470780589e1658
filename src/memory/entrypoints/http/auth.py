"""Who may call the HTTP server: the SDK's TokenVerifier, for the owner's local credential, our
own API tokens or an issuer's JWTs.

Either verifier answers a bad credential with None (the SDK then sends 401 and
`WWW-Authenticate`); neither logs, raises or returns the token it was shown.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any

import anyio.to_thread
import jwt
from mcp.server.auth.provider import AccessToken, TokenVerifier
from mcp.server.auth.settings import AuthSettings

from memory.domain.errors import InvalidRequest
from memory.domain.tokens import READ_SCOPE, WRITE_SCOPE, same_secret, split_bearer
from memory.entrypoints.http.config import AuthMode, HttpConfig, OAuthConfig
from memory.ports.errors import StoreError
from memory.ports.token_store import TokenStore

log = logging.getLogger(__name__)

# Asymmetric signatures only: `none` and the HMAC family (whose "key" would be the issuer's
# public key, the classic algorithm-confusion forgery) are never accepted.
ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512",
              "EdDSA")
_KEY_TYPES = {"RS": ("RSA", None), "PS": ("RSA", None), "ES256": ("EC", "secp256r1"),
              "ES384": ("EC", "secp384r1"), "ES512": ("EC", "secp521r1"), "EdDSA": ("OKP", None)}
LEEWAY_S = 30  # clock skew tolerated on exp / nbf / iat
JWKS_FETCH_TIMEOUT_S = 5.0


class OwnerTokenVerifier(TokenVerifier):
    """The secret of `<state_dir>/local-token`: whoever can read it is the owner, who may
    read and write."""

    def __init__(self, secret: str | None):
        if not secret:
            raise InvalidRequest("--auth local needs the owner's local credential")
        self._secret = secret

    async def verify_token(self, token: str) -> AccessToken | None:
        if not same_secret(self._secret, token):
            return None
        return AccessToken(token=token, client_id="owner", subject="owner",
                           scopes=[READ_SCOPE, WRITE_SCOPE], claims={"iss": "ai-memory-local"})


class StoreTokenVerifier(TokenVerifier):
    """`aim_...` tokens from `ai-memory token create`, checked against the salted digests."""

    def __init__(self, store: TokenStore):
        self._store = store

    async def verify_token(self, token: str) -> AccessToken | None:
        parts = split_bearer(token)
        if parts is None:
            return None
        token_id, secret = parts
        try:
            found = self._store.find(token_id)
        except StoreError as exc:
            log.error("cannot check API tokens: %s", exc)
            return None
        if found is None or not found.matches(secret):
            return None
        return AccessToken(token=token, client_id=found.name, subject=found.name,
                           scopes=list(found.scope.grants), claims={"iss": "ai-memory"})


class JwtTokenVerifier(TokenVerifier):
    """JWT access tokens of one issuer, for one audience (RFC 8707), signed by its keys."""

    def __init__(self, config: OAuthConfig):
        self._config = config
        self._keys = _JwksKeys(config.jwks)

    async def verify_token(self, token: str) -> AccessToken | None:
        try:
            header = jwt.get_unverified_header(token)
            alg = header.get("alg")
            if alg not in ALGORITHMS:
                log.info("refused a token signed with %r", alg)
                return None
            jwk = await anyio.to_thread.run_sync(self._keys.key_for, token, header.get("kid"))
            refusal = key_refusal(jwk, alg)
            if refusal is not None:
                log.info("refused a bearer token: %s", refusal)
                return None
            claims = jwt.decode(token, jwk.key, algorithms=[alg], audience=self._config.audience,
                                issuer=self._config.issuer, leeway=LEEWAY_S,
                                options={"require": ["exp", "iss", "aud"]})
        except (jwt.PyJWTError, ValueError, TypeError, KeyError) as exc:
            log.info("refused a bearer token: %s", type(exc).__name__)
            return None
        return _access_token(token, claims, self._config.audience)


def key_refusal(jwk: jwt.PyJWK, alg: str) -> str | None:
    """Why the key may not check a signature made with `alg`, or None when it may: a JWK
    stating its own `alg` is used for that one only (RFC 7517 4.4), one stating a `use` other
    than `sig` for no signature, and a key's type (and curve) must be the algorithm's."""
    stated = getattr(jwk, "_jwk_data", {}).get("alg")  # PyJWK exposes kty, kid, use; not alg
    if stated is not None and stated != alg:
        return f"the key is for {stated}, the token says {alg}"
    if jwk.public_key_use not in (None, "sig"):
        return f"the key's use is {jwk.public_key_use!r}, not signatures"
    kty, curve = _KEY_TYPES[alg[:2] if alg[:2] in ("RS", "PS") else alg]
    if jwk.key_type != kty:
        return f"a {jwk.key_type} key cannot check an {alg} signature"
    if curve is not None and getattr(getattr(jwk.key, "curve", None), "name", None) != curve:
        return f"{alg} needs a key on {curve}"
    return None


def _access_token(token: str, claims: dict[str, Any], audience: str) -> AccessToken:
    scopes = _scopes(claims)
    if WRITE_SCOPE in scopes and READ_SCOPE not in scopes:
        scopes.append(READ_SCOPE)
    subject = str(claims["sub"]) if claims.get("sub") is not None else None
    client = claims.get("client_id") or claims.get("azp") or subject or "unknown"
    return AccessToken(token=token, client_id=str(client), scopes=scopes,
                       expires_at=int(claims["exp"]), resource=audience, subject=subject,
                       claims={"iss": claims["iss"]})


def _scopes(claims: dict[str, Any]) -> list[str]:
    """`scope` (RFC 9068: space-separated) or `scp` (a list, as some issuers write it)."""
    raw = claims.get("scope", claims.get("scp", ""))
    values = raw.split() if isinstance(raw, str) else raw if isinstance(raw, list) else []
    return [str(v) for v in values]


class _JwksKeys:
    """The issuer's public keys: fetched from a URL (cached, refetched for an unknown key id)
    or read from a file (read again when it changes)."""

    def __init__(self, source: str):
        self._url = source if source.startswith(("https://", "http://")) else None
        self._file = None if self._url else Path(source).expanduser()
        self._client = (jwt.PyJWKClient(self._url, cache_keys=True, lifespan=600,
                                        timeout=JWKS_FETCH_TIMEOUT_S) if self._url else None)
        self._lock = threading.Lock()
        self._stamp: int | None = None
        self._set: jwt.PyJWKSet | None = None
        if self._file is not None:
            self._file_keys()  # a missing or broken file stops the start, not the first request

    def key_for(self, token: str, kid: str | None) -> jwt.PyJWK:
        if self._client is not None:
            return self._client.get_signing_key_from_jwt(token)
        keys = [k for k in self._file_keys().keys if kid is None or k.key_id == kid]
        if len(keys) != 1:
            raise KeyError("no single signing key matches the token's key id")
        return keys[0]

    def _file_keys(self) -> jwt.PyJWKSet:
        try:
            stamp = self._file.stat().st_mtime_ns
            with self._lock:
                if stamp != self._stamp:
                    self._set = jwt.PyJWKSet.from_json(self._file.read_text(encoding="utf-8"))
                    self._stamp = stamp
                return self._set
        except (OSError, jwt.PyJWKSetError) as exc:
            raise InvalidRequest(f"cannot read the JWK Set {self._file}: {exc}") from exc


def verifier_for(config: HttpConfig, store: TokenStore | None,
                 owner_secret: str | None = None) -> dict[str, Any]:
    """The `auth` and `token_verifier` the SDK server takes for this configuration."""
    if config.auth is AuthMode.NONE:
        return {}
    if config.auth in (AuthMode.TOKENS, AuthMode.LOCAL):
        # No authorization server: no protected-resource metadata, a plain Bearer challenge.
        settings = AuthSettings(issuer_url=config.resource_url, resource_server_url=None,
                                required_scopes=[READ_SCOPE])
        verifier = (OwnerTokenVerifier(owner_secret) if config.auth is AuthMode.LOCAL
                    else StoreTokenVerifier(store))
        return {"auth": settings, "token_verifier": verifier}
    settings = AuthSettings(issuer_url=config.oauth.issuer, resource_server_url=config.resource_url,
                            required_scopes=[READ_SCOPE], validate_token_resource=False)
    return {"auth": settings, "token_verifier": JwtTokenVerifier(config.oauth)}
