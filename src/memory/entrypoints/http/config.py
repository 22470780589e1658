"""How the HTTP server listens and whom it lets in, from `serve --http` flags, checked up front."""

from __future__ import annotations

import ipaddress
from enum import Enum
from urllib.parse import urlsplit

from attrs import frozen

from memory.domain.errors import InvalidRequest
from memory.entrypoints.jsonrpc_input import MAX_MESSAGE_BYTES

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
MCP_PATH = "/mcp"
STATUS_PATH = "/ai-memory/status"  # the daemon's probe: 401 to whoever proves no credential
MAX_BODY_BYTES = MAX_MESSAGE_BYTES  # the same bound as a stdio line
MAX_CONCURRENT_PER_TOKEN = 8


class AuthMode(Enum):
    NONE = "none"  # on loopback only, and only when asked for: every local account gets in
    LOCAL = "local"  # the owner's secret in the state folder (the default on loopback)
    TOKENS = "tokens"
    OAUTH = "oauth"


@frozen(kw_only=True)
class OAuthConfig:
    """OAuth 2.1 resource-server mode: whose tokens, for which audience, checked with which keys."""

    issuer: str
    audience: str
    jwks: str  # an https URL, or a local file holding the issuer's JWK Set


@frozen(kw_only=True)
class Limits:
    """What one client may hold or ask of the server; past each, a refusal that says which."""

    header_timeout_s: float = 10.0  # to send a request line and headers (else 408, closed)
    body_timeout_s: float = 30.0  # to send the whole body once its headers are in (else 408)
    max_connections: int = 256  # open at once, every client together (else 503)
    max_sessions_per_token: int = 64  # open MCP sessions of one credential (else 429)
    requests_per_minute: int = 600  # POSTs of one credential, a minute's worth as a burst (429)

    @classmethod
    def from_flags(cls, **given: float | None) -> Limits:
        """The defaults, less each flag given (`--header-timeout` for header_timeout_s...)."""
        defaults = cls()
        values = {}
        for name, value in given.items():
            if value is None:
                continue
            if value <= 0:
                flag = {"requests_per_minute": "--rate-limit"}.get(
                    name, "--" + name.removesuffix("_s").replace("_", "-"))
                raise InvalidRequest(f"{flag} must be above 0, not {value}")
            values[name] = type(getattr(defaults, name))(value)
        return cls(**values)


@frozen(kw_only=True)
class HttpConfig:
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    auth: AuthMode = AuthMode.NONE
    oauth: OAuthConfig | None = None
    public_url: str | None = None
    allowed_origins: tuple[str, ...] = ()
    max_body_bytes: int = MAX_BODY_BYTES
    max_concurrent_per_token: int = MAX_CONCURRENT_PER_TOKEN
    limits: Limits = Limits()

    @classmethod
    def from_flags(cls, bind: str | None, *, auth: str | None = None, issuer: str | None = None,
                   audience: str | None = None, jwks: str | None = None,
                   public_url: str | None = None, allow_origins: tuple[str, ...] = (),
                   max_concurrent: int | None = None, limits: Limits | None = None) -> HttpConfig:
        host, port = parse_bind(bind)
        mode = _auth_mode(auth, loopback=is_loopback(host))
        config = cls(host=host, port=port, auth=mode,
                     oauth=_oauth(mode, issuer, audience, jwks),
                     public_url=_public_url(public_url),
                     allowed_origins=tuple(_origin(o) for o in allow_origins),
                     max_concurrent_per_token=_positive(max_concurrent, MAX_CONCURRENT_PER_TOKEN),
                     limits=limits or Limits())
        config.check_exposure()
        return config

    @property
    def loopback(self) -> bool:
        return is_loopback(self.host)

    @property
    def resource_url(self) -> str:
        """The URL clients reach the MCP endpoint at (the RFC 9728 `resource`)."""
        if self.public_url:
            return self.public_url
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}{MCP_PATH}"

    def check_exposure(self) -> None:
        """Refuse what would open memory to the network unauthenticated, or under no name."""
        if self.loopback:
            return
        if self.auth is AuthMode.LOCAL:
            raise InvalidRequest(
                f"--auth local is for loopback only: {self.host} is reachable from other "
                "machines; pass --auth tokens or --auth oauth")
        if self.auth is AuthMode.NONE:
            raise InvalidRequest(
                f"refusing to serve on {self.host}, which other machines can reach, without "
                "authentication: pass --auth tokens or --auth oauth (or bind 127.0.0.1)")
        if self.public_url is None and _wildcard(self.host):
            raise InvalidRequest(
                f"serving on {self.host} needs --public-url URL, the address clients use "
                "(e.g. https://memory.example.com/mcp): only that Host and Origin are admitted")


def parse_bind(raw: str | None) -> tuple[str, int]:
    """`[HOST:]PORT` (IPv6 as `[::1]:PORT`) as (host, port); empty means 127.0.0.1:8765."""
    text = (raw or "").strip()
    if not text:
        return DEFAULT_HOST, DEFAULT_PORT
    host, sep, port = text.rpartition(":")
    if not sep:
        host, port = DEFAULT_HOST, text
    host = host.strip("[]") or DEFAULT_HOST
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise InvalidRequest(f"--http takes [HOST:]PORT with a port of 0-65535, not {raw!r}")
    return host, int(port)


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a host name other than localhost may resolve to anything


def require_tls(url: str, flag: str, carries: str) -> None:
    """Refuse a plain http:// URL to a host other than loopback: what travels over it
    (`carries`) would cross the network in the clear, readable and changeable on the way."""
    parts = urlsplit(url.strip())
    if parts.scheme.lower() == "http" and not is_loopback(parts.hostname or ""):
        raise InvalidRequest(
            f"{flag} {url.strip()}: plain http:// to another machine would send {carries} in "
            f"the clear; use https:// (plain http:// is accepted only to localhost/127.0.0.1/::1)")


def _wildcard(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_unspecified
    except ValueError:
        return False


def _auth_mode(raw: str | None, *, loopback: bool) -> AuthMode:
    """The mode asked for; unasked, the owner's local credential on loopback (and none
    elsewhere, which check_exposure then refuses)."""
    if raw is None:
        return AuthMode.LOCAL if loopback else AuthMode.NONE
    try:
        return AuthMode(raw.strip().lower())
    except ValueError:
        raise InvalidRequest(f"--auth must be local, none, tokens or oauth, not {raw!r}") from None


def _oauth(mode: AuthMode, issuer: str | None, audience: str | None,
           jwks: str | None) -> OAuthConfig | None:
    given = {"--issuer": issuer, "--audience": audience, "--jwks": jwks}
    if mode is not AuthMode.OAUTH:
        if any(given.values()):
            raise InvalidRequest("--issuer, --audience and --jwks belong to --auth oauth")
        return None
    missing = [flag for flag, value in given.items() if not (value or "").strip()]
    if missing:
        raise InvalidRequest(f"--auth oauth needs {', '.join(missing)}: the issuer whose tokens "
                             "are accepted, the audience they must be issued for, and where "
                             "its signing keys are (a JWKS URL or file)")
    if urlsplit(issuer).scheme not in ("https", "http"):
        raise InvalidRequest(f"--issuer must be the issuer's URL, not {issuer!r}")
    require_tls(issuer, "--issuer", "the issuer's metadata (which tells clients where to "
                                    "get their tokens)")
    if urlsplit(jwks.strip()).scheme.lower() in ("http", "https"):
        require_tls(jwks, "--jwks", "the keys that decide which tokens are accepted (anyone "
                                    "on the way could swap in their own and forge tokens)")
    return OAuthConfig(issuer=issuer.strip(), audience=audience.strip(), jwks=jwks.strip())


def _public_url(raw: str | None) -> str | None:
    if not raw:
        return None
    parts = urlsplit(raw.strip())
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise InvalidRequest(f"--public-url must be an http(s) URL, not {raw!r}")
    return raw.strip()


def _origin(raw: str) -> str:
    parts = urlsplit(raw.strip())
    if parts.scheme not in ("https", "http") or not parts.netloc or parts.path not in ("", "/"):
        raise InvalidRequest(f"--allow-origin takes an origin like https://app.example.com, "
                             f"not {raw!r}")
    return f"{parts.scheme}://{parts.netloc}"


def _positive(value: int | None, default: int) -> int:
    if value is None:
        return default
    if value < 1:
        raise InvalidRequest(f"--max-concurrent must be at least 1, not {value}")
    return value
