"""InMemoryTokenStore: issued tokens in a list, for unit tests."""

from __future__ import annotations

from collections.abc import Sequence

from memory.domain.errors import InvalidRequest
from memory.domain.tokens import ApiToken
from memory.ports.token_store import TokenStore


class InMemoryTokenStore(TokenStore):
    def __init__(self):
        self.tokens: list[ApiToken] = []

    def add(self, token: ApiToken) -> None:
        if any(t.name == token.name for t in self.tokens):
            raise InvalidRequest(f"a token named {token.name!r} exists; revoke it first")
        self.tokens.append(token)

    def find(self, token_id: str) -> ApiToken | None:
        return next((t for t in self.tokens if t.token_id == token_id), None)

    def all(self) -> Sequence[ApiToken]:
        return tuple(self.tokens)

    def remove(self, name: str) -> bool:
        kept = [t for t in self.tokens if t.name != name]
        removed = len(kept) != len(self.tokens)
        self.tokens = kept
        return removed
