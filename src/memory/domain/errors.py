"""Errors raised by the core; the edges translate them into CLI exits and MCP tool errors."""


class AiMemoryError(Exception):
    """Base of every error ai-memory raises on purpose."""


class InvalidRequest(AiMemoryError, ValueError):
    """A caller's input broke a rule (bad value, out of bounds, outside the root)."""


class NotFound(AiMemoryError, LookupError):
    """A note, path or graph node the caller named does not exist."""


class Unavailable(AiMemoryError, RuntimeError):
    """A derived resource (index, graph, model) is missing or broken; a refresh may fix it."""


class RefreshBusy(AiMemoryError, RuntimeError):
    """Another process holds the refresh lock for longer than we agreed to wait."""


class NotInstalled(AiMemoryError, RuntimeError):
    """The settings ask for a part of ai-memory this installation lacks (an optional extra)."""
