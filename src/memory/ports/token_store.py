"""TokenStore: the HTTP server's issued API tokens, kept as salted digests."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from memory.domain.tokens import ApiToken


@runtime_checkable
class TokenStore(Protocol):
    def add(self, token: ApiToken) -> None:
        """Keep a newly issued token; InvalidRequest if its name is already taken."""

    def find(self, token_id: str) -> ApiToken | None:
        """The token with this public id, as stored now (a revoked one is gone), or None."""

    def all(self) -> Sequence[ApiToken]:
        """Every token, oldest first."""

    def remove(self, name: str) -> bool:
        """Revoke the token of this name; False if there was none."""
