"""One message source, worded per edge: the core's messages carry the steps they ask for as
Actions (domain/messages.py); MCP says the tool call (`run memory_refresh`), the command line
says its command (`run ai-memory refresh`)."""

from __future__ import annotations

from typing import TypeVar

from attrs import evolve, fields, has

from memory.domain.messages import Action, Message

T = TypeVar("T")

# Fields of results that hold messages to a person, never note text.
MESSAGE_FIELDS = frozenset({"warnings", "problems", "no_answer_reason", "reason", "detail", "why"})
COMMAND_WORDS: dict[Action, str] = {
    **{a: f"ai-memory {a.value}" for a in Action},
    Action.REFRESH_FULL: "ai-memory refresh --mode full",
    Action.ALLOW_DUPLICATE: "--allow-duplicate",
}


def cli_words(message: str) -> str:
    """A core message as the command line says it (text without Actions stays as it is)."""
    return message.worded(COMMAND_WORDS) if isinstance(message, Message) else message


def error_words(exc: BaseException) -> str:
    """An error's message as the command line says it."""
    said = exc.args[0] if len(exc.args) == 1 else None
    return cli_words(said) if isinstance(said, Message) else str(exc)


def in_cli_words(value: T) -> T:
    """A typed result whose messages (warnings, problems, reasons) name CLI commands; note
    text, titles and paths are left exactly as they are."""
    if not has(type(value)):
        return value
    changes = {}
    for f in fields(type(value)):
        if not f.init:
            continue
        item = getattr(value, f.name)
        if f.name in MESSAGE_FIELDS:
            changes[f.name] = _reworded(item)
        elif has(type(item)) or (isinstance(item, tuple) and item and has(type(item[0]))):
            changes[f.name] = tuple(map(in_cli_words, item)) if isinstance(item, tuple) \
                else in_cli_words(item)
    return evolve(value, **changes) if changes else value


def _reworded(item):
    if isinstance(item, str):
        return cli_words(item)
    if isinstance(item, tuple):
        return tuple(cli_words(x) if isinstance(x, str) else x for x in item)
    return item
