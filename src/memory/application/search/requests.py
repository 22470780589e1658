"""Validated, frozen request objects the service builds from raw tool or CLI input."""

from __future__ import annotations

import re
from typing import Any

from attrs import frozen

from memory.domain.errors import InvalidRequest
from memory.domain.scope import ScopeFilter, StatusFilter

MAX_QUERY_CHARS = 2000
MAX_LIMIT = 50
MAX_DEPTH = 4
MAX_NAME_CHARS = 1000
MAX_NOTE_CHARS = 4000
LONE_SURROGATE = re.compile("[\ud800-\udfff]")  # a str holds pairs as one code point


def clean_text(value: object, field: str, max_chars: int, required: bool = True) -> str:
    if value is None:
        value = ""
    if not isinstance(value, str):
        raise InvalidRequest(f"{field} must be a string")
    if "\x00" in value:
        raise InvalidRequest(f"{field} must not contain NUL characters")
    lone = LONE_SURROGATE.search(value)
    if lone is not None:
        raise InvalidRequest(_surrogate_message(field, lone.group(), lone.start()))
    if len(value) > max_chars:
        raise InvalidRequest(f"{field} is too long ({len(value)} characters, at most {max_chars})")
    value = value.strip()
    if required and not value:
        raise InvalidRequest(f"{field} must not be empty")
    return value


def _surrogate_message(field: str, char: str, at: int) -> str:
    """Python spells a byte a non-UTF-8 terminal passed in argv as U+DC80..U+DCFF; a JSON
    client's `\\udce9` escape arrives as the same lone surrogate. Neither is text."""
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:
        byte = code - 0xDC00
        return (f"{field} holds the byte 0x{byte:02X}, which is not UTF-8 (at character "
                f"{at + 1}; a terminal set to another encoding?); note paths spell such a "
                f"byte as %{byte:02X}")
    return (f"{field} holds a lone UTF-16 surrogate (U+{code:04X} at character {at + 1}, e.g. "
            "half of a cut emoji); send well-formed Unicode")


def bounded_int(value: object, field: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        try:
            if isinstance(value, str) and value.strip().lstrip("-").isdigit():
                value = int(value)
            else:
                raise TypeError
        except TypeError:
            raise InvalidRequest(f"{field} must be an integer") from None
    if not low <= value <= high:
        raise InvalidRequest(f"{field} must be between {low} and {high}, not {value}")
    return value


def line_range(start_line: object, end_line: object, total: int, path: str) -> tuple[int, int]:
    """The lines a read of a `total`-line note asks for (default: all of them)."""
    first = 1 if start_line is None else bounded_int(start_line, "start_line", 1, 10**9)
    last = total if end_line is None else bounded_int(end_line, "end_line", 1, 10**9)
    if first > max(total, 1):
        raise InvalidRequest(f"start_line {first} is past the end of {path} ({total} lines)")
    if end_line is not None and last < first:
        raise InvalidRequest("end_line must not be before start_line")
    return first, last


def optional_key(value: object, field: str) -> str | None:
    text = clean_text(value, field, 200, required=False)
    return text or None


def scope_filter(*, root_scope: object = None, repository: object = None, project: object = None,
                 ticket: object = None, status: object = None, path_prefix: object = None,
                 default_status: str = "active") -> ScopeFilter:
    """The explicit filters of a search or a graph walk, validated."""
    return ScopeFilter(
        root_scope=optional_key(root_scope, "root_scope"),
        repository=optional_key(repository, "repository"),
        project=optional_key(project, "project"),
        ticket=optional_key(ticket, "ticket"),
        status=StatusFilter.parse(optional_key(status, "status") or default_status),
        path_prefix=optional_key(path_prefix, "path_prefix"),
    )


@frozen(kw_only=True)
class SearchRequest:
    query: str
    filter: ScopeFilter
    limit: int = 8

    @classmethod
    def parse(cls, query: object, *, limit: object = 8, **filters: Any) -> SearchRequest:
        return cls(query=clean_text(query, "query", MAX_QUERY_CHARS),
                   filter=scope_filter(**filters), limit=bounded_int(limit, "limit", 1, MAX_LIMIT))
