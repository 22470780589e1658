"""Messages that ask their reader to act (run a refresh, read a note): the step is a typed
Action, and each edge names it in its own words, the MCP tool call or the CLI command."""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum


class Action(StrEnum):
    """A step a message asks for; what it is called depends on where the message is read."""

    SEARCH = "search"
    GET = "get"
    NEIGHBORS = "neighbors"
    PATH = "path"
    EXPLAIN = "explain"
    REFRESH = "refresh"
    REFRESH_FULL = "refresh-full"
    HEALTH = "health"
    FEEDBACK = "feedback"
    WRITE = "write"
    EDIT = "edit"
    ALLOW_DUPLICATE = "allow-duplicate"  # the write option that accepts a near-duplicate


# The core states its messages in the words of the MCP tools (the interface agents use);
# the command line has its own (entrypoints/wording.py).
TOOL_WORDS: Mapping[Action, str] = {
    **{a: f"memory_{a.value}" for a in Action},
    Action.REFRESH_FULL: "memory_refresh with mode 'full'",
    Action.ALLOW_DUPLICATE: "allow_duplicate=true",
}


class Message(str):
    """Text and Actions in order. As a str it reads in TOOL_WORDS, so it goes wherever a
    message string goes; `worded` says it in another edge's words. Building one from
    Messages keeps their Actions (an f-string would flatten them into tool words)."""

    parts: tuple[str | Action, ...]

    def __new__(cls, *parts: str | Action) -> Message:
        flat = tuple(p for part in parts
                     for p in (part.parts if isinstance(part, Message) else (part,)))
        message = super().__new__(cls, _joined(flat, TOOL_WORDS))
        message.parts = flat
        return message

    @property
    def actions(self) -> tuple[Action, ...]:
        return tuple(p for p in self.parts if isinstance(p, Action))

    def worded(self, words: Mapping[Action, str]) -> str:
        """The message with each Action named as `words` names it."""
        return _joined(self.parts, words)


def _joined(parts: tuple[str | Action, ...], words: Mapping[Action, str]) -> str:
    return "".join(words[p] if isinstance(p, Action) else str(p) for p in parts)
