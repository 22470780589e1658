"""API tokens of the HTTP server: a name, a scope, and a salted digest of the secret, never the secret."""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Iterable
from enum import Enum

from attrs import frozen

from memory.domain.errors import InvalidRequest

PREFIX = "aim_"  # recognisable in a leaked-secret scan, like ghp_ or xoxb-
READ_SCOPE = "memory:read"
WRITE_SCOPE = "memory:write"
# Why a read token is refused a tool that changes memory (and memory_health says so).
READ_ONLY_TOKEN = ("this token may only read: `ai-memory token create --scope write` makes one "
                   "that may")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_ID = re.compile(r"^[0-9a-f]{16}$")


class TokenScope(Enum):
    """What a token may do: read-only tools, or every tool."""

    READ = "read"
    WRITE = "write"

    @classmethod
    def parse(cls, raw: str) -> TokenScope:
        try:
            return cls(str(raw).strip().lower())
        except ValueError:
            raise InvalidRequest(f"token scope must be 'read' or 'write', not {raw!r}") from None

    @property
    def grants(self) -> tuple[str, ...]:
        """The OAuth-style scopes a request with this token carries (write implies read)."""
        return (READ_SCOPE,) if self is TokenScope.READ else (READ_SCOPE, WRITE_SCOPE)


def may_change_memory(scopes: Iterable[str]) -> bool:
    """Whether a request carrying `scopes` may call the tools that are not read-only
    (memory_write, memory_edit, memory_refresh, memory_feedback)."""
    return WRITE_SCOPE in scopes


class ProofRole(Enum):
    """Which side of a loopback connection proves it holds the owner's local secret."""

    CLIENT = "client"
    SERVER = "server"


def owner_proof(secret: str, role: ProofRole, port: int, nonce: str) -> str:
    """HMAC-SHA256 of `nonce` under the owner's local secret, bound to the side answering and
    to the server's port: a proof seen on one port, or sent by the other side, proves nothing
    anywhere else."""
    message = f"ai-memory {role.value} {port} {nonce}".encode("utf-8")
    return hmac.new(secret.encode("utf-8"), message, hashlib.sha256).hexdigest()


def same_secret(expected: str, presented: str) -> bool:
    """`presented` is `expected`, compared in constant time (any text, not only ASCII)."""
    return hmac.compare_digest(expected.encode("utf-8"), presented.encode("utf-8"))


def token_name(raw: str) -> str:
    """A token's name as given, if it is a short, printable identifier (it shows in listings)."""
    name = str(raw).strip()
    if not _NAME.match(name):
        raise InvalidRequest("token name must be 1-64 letters, digits, '.', '_' or '-', "
                             "starting with a letter or digit")
    return name


@frozen(kw_only=True)
class ApiToken:
    """One issued token as stored: its public id and a salted SHA-256 of its secret.

    The secret is 32 random bytes, so one salted hash is as strong as a slow KDF would be
    and keeps every request's check cheap.
    """

    name: str
    scope: TokenScope
    token_id: str
    salt: str
    digest: str
    created: str

    @classmethod
    def issue(cls, *, name: str, scope: TokenScope, token_id: str, secret: str, salt: bytes,
              created: str) -> ApiToken:
        if not _ID.match(token_id):
            raise InvalidRequest("token id must be 16 lower-case hex digits")
        return cls(name=token_name(name), scope=scope, token_id=token_id, salt=salt.hex(),
                   digest=_digest(salt, secret), created=created)

    def matches(self, secret: str) -> bool:
        """True when `secret` is this token's secret (compared in constant time)."""
        return hmac.compare_digest(self.digest, _digest(bytes.fromhex(self.salt), secret))


def bearer_value(token_id: str, secret: str) -> str:
    """The string a client sends: `aim_<id>_<secret>`; the id finds the record to check."""
    return f"{PREFIX}{token_id}_{secret}"


def split_bearer(value: str) -> tuple[str, str] | None:
    """(token id, secret) of a bearer value that has our shape, else None."""
    if not value.startswith(PREFIX):
        return None
    token_id, sep, secret = value[len(PREFIX):].partition("_")
    if not sep or not secret or not _ID.match(token_id):
        return None
    return token_id, secret


def _digest(salt: bytes, secret: str) -> str:
    return hashlib.sha256(salt + secret.encode("utf-8")).hexdigest()
