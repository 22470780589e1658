"""One message source, rendered per edge: the core's messages name the MCP tools
(`run memory_refresh`); on the command line they name its commands (`run ai-memory refresh`)."""

from __future__ import annotations

import re
from typing import TypeVar

from attrs import evolve, fields, has

T = TypeVar("T")

# Fields of results that hold messages to a person, never note text.
MESSAGE_FIELDS = frozenset({"warnings", "problems", "no_answer_reason", "reason", "detail", "why"})
_FULL = re.compile(r"\bmemory_refresh with mode 'full'")
_TOOL = re.compile(
    r"\bmemory_(search|get|neighbors|path|explain|refresh|health|feedback|write|edit)\b")


def cli_words(message: str) -> str:
    """A core message as the command line says it."""
    message = _FULL.sub("ai-memory refresh --mode full", message)
    return _TOOL.sub(r"ai-memory \1", message.replace("allow_duplicate=true", "--allow-duplicate"))


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
