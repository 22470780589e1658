"""Why a client's config file could not be merged; the coordinator turns these into results."""

from __future__ import annotations


class ClientConfigError(Exception):
    """Base of the errors raised while reading or editing one client's config file."""


class ConfigSyntaxError(ClientConfigError):
    """The existing file does not parse (or has an unexpected shape); nothing is written."""


class UneditableConfig(ClientConfigError):
    """The file is valid but we cannot merge into it without losing something of the user's.

    `snippet` is what the user should add by hand.
    """

    def __init__(self, message: str, snippet: str) -> None:
        super().__init__(message)
        self.snippet = snippet
