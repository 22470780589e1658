"""The one bounded parse of a client's JSON-RPC message, shared by every transport's edge
(an HTTP body in http/guards.py, a stdio line in mcp_stdio.py), before the SDK sees it.

Python's and pydantic's parsers each accept or reject their own set of hostile inputs
(100,000 nested brackets overflow Python's stack; 1e999999 becomes inf; a 5,000-digit
integer passes Python's limit check only sometimes; a repeated key silently keeps the last
value; invalid UTF-8 is replaced on stdio). Here each such message is refused with a
JSON-RPC error naming the rule it broke, and a refusal never raises anything else.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any


MAX_MESSAGE_BYTES = 2 * 1024 * 1024  # the largest tool argument is a few kB; room for writes
MAX_DEPTH = 64  # MCP messages nest about six deep; a tool argument a few more
MAX_NUMBER_CHARS = 100  # an id or an argument, never a number of a hundred digits
MAX_ERROR_MESSAGE = 300
PARSE_ERROR, INVALID_REQUEST = -32700, -32600  # JSON-RPC 2.0's codes (stdlib only: the bridge
# imports the HTTP settings, and with them this module, and must start light)

_STRING = re.compile(r'"(?:[^"\\]++|\\.)*+"', re.DOTALL)
_BRACKET = re.compile(r"[\[\]{}]")
_SPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


class MalformedMessage(Exception):
    """A message refused at the edge, with the JSON-RPC error that answers it."""

    def __init__(self, code: int, message: str, keys: dict[str, object] | None = None):
        super().__init__(message)
        keys = keys or {}
        self.code = code
        # A request's id only: a reply's id numbers one of our requests, not the client's.
        request_id = keys.get("id") if "method" in keys else None
        self.request_id = request_id if _usable_id(request_id) else None
        self.is_reply = "method" not in keys and ("result" in keys or "error" in keys)

    @property
    def message(self) -> str:
        """The error message, one line of at most MAX_ERROR_MESSAGE characters."""
        text = " ".join(str(self).split())
        return text if len(text) <= MAX_ERROR_MESSAGE else text[:MAX_ERROR_MESSAGE - 3] + "..."


class _Refused(Exception):
    """Raised inside the parser's hooks; becomes a MalformedMessage with the id added."""


def parse_message(raw: bytes) -> object:
    """The JSON value of one client message (an object), or MalformedMessage saying why not:
    -32700 for bytes that are not JSON text, -32600 for JSON we do not take."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MalformedMessage(PARSE_ERROR, f"parse error: the message is not UTF-8 (byte "
                               f"{exc.start}); send UTF-8 text",
                               recover_keys(raw.decode("utf-8", "replace"))) from None
    _check_depth(text)
    try:
        value = json.loads(text, object_pairs_hook=_unique_keys, parse_int=_integer,
                           parse_float=_decimal, parse_constant=_constant)
    except _Refused as exc:
        raise MalformedMessage(INVALID_REQUEST, f"invalid request: {exc}",
                               recover_keys(text)) from None
    except (ValueError, RecursionError) as exc:
        raise MalformedMessage(PARSE_ERROR, f"parse error: the message is not JSON ({exc})",
                               recover_keys(text)) from None
    try:
        _check_strings(value)
        _check_shape(value)
    except _Refused as exc:
        raise MalformedMessage(INVALID_REQUEST, f"invalid request: {exc}",
                               value if isinstance(value, dict) else None) from None
    return value


def _check_depth(text: str) -> None:
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return
    depth = 0
    for bracket in _BRACKET.finditer(_STRING.sub('""', text)):
        depth += 1 if bracket.group() in "[{" else -1
        if depth > MAX_DEPTH:
            raise MalformedMessage(INVALID_REQUEST, f"invalid request: nested more than "
                                   f"{MAX_DEPTH} levels deep", recover_keys(text))


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    if len(value) != len(pairs):
        seen: set[str] = set()
        repeated = next(k for k, _ in pairs if k in seen or seen.add(k))
        raise _Refused(f"the key {repeated[:40]!r} appears twice in one object")
    return value


def _integer(digits: str) -> int:
    if len(digits) > MAX_NUMBER_CHARS:
        raise _Refused(f"a number of {len(digits)} characters (at most {MAX_NUMBER_CHARS})")
    return int(digits)


def _decimal(digits: str) -> float:
    value = float(digits) if len(digits) <= MAX_NUMBER_CHARS else math.inf
    if not math.isfinite(value):
        raise _Refused(f"the number {digits[:20]}{'...' if len(digits) > 20 else ''} is "
                       "out of range")
    return value


def _constant(name: str) -> float:
    raise ValueError(f"{name} is not a JSON value")


def _check_strings(value: object) -> None:
    """Well-formed Unicode only: a lone surrogate escape (half of a cut emoji) cannot be
    stored, indexed or encoded back, and the SDK's own parser refuses it later."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            lone = next(c for c in value if 0xD800 <= ord(c) <= 0xDFFF)
            raise _Refused(f"a string holds a lone UTF-16 surrogate escape (\\u{ord(lone):04x},"
                           " e.g. half of a cut emoji); send well-formed Unicode") from None
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_strings(key)
            _check_strings(item)
    elif isinstance(value, list):
        for item in value:
            _check_strings(item)


def _check_shape(value: object) -> None:
    """A JSON-RPC 2.0 request, notification or response, one per message (MCP has no batches)."""
    if isinstance(value, list):
        raise _Refused("a batch (a JSON array) is not taken: send one message at a time")
    if not isinstance(value, dict):
        raise _Refused("not a JSON-RPC 2.0 message: a JSON object is expected")
    if value.get("jsonrpc") != "2.0":
        raise _Refused('not a JSON-RPC 2.0 message: "jsonrpc" must be "2.0"')
    if "id" in value and not _usable_id(value["id"]):
        raise _Refused('"id" must be a string or an integer')
    if "method" in value:
        if not isinstance(value["method"], str):
            raise _Refused('"method" must be a string')
        if "params" in value and not isinstance(value["params"], dict):
            raise _Refused('"params" must be an object')
    elif "id" not in value or ("result" in value) == ("error" in value):
        raise _Refused("not a JSON-RPC 2.0 request, notification or response")


def _usable_id(request_id: object) -> bool:
    return isinstance(request_id, (str, int)) and not isinstance(request_id, bool)


def recover_keys(text: str) -> dict[str, object]:
    """The top-level keys of a JSON object that does not parse as a whole (a line cut
    short, or a value refused), read one by one as far as they go; only the id's value is
    decoded, every other key maps to True."""
    keys: dict[str, object] = {}
    at = _SPACE.match(text, 0).end()
    if text[at:at + 1] != "{":
        return keys
    at += 1
    while at is not None:
        at = _SPACE.match(text, at).end()
        try:
            key, at = _DECODER.raw_decode(text, at)
        except ValueError:
            return keys
        at = _SPACE.match(text, at).end()
        if not isinstance(key, str) or text[at:at + 1] != ":":
            return keys
        at = _SPACE.match(text, at + 1).end()
        keys[key] = _small_value(text, at) if key == "id" else True
        at = _value_end(text, at)
        at = at + 1 if at is not None and text[at:at + 1] == "," else None
    return keys


def _small_value(text: str, at: int) -> object:
    try:
        return _DECODER.raw_decode(text, at)[0]
    except (ValueError, RecursionError):
        return None


def _value_end(text: str, at: int) -> int | None:
    """Index just past the JSON value starting at `at` (with trailing blanks), else None."""
    depth = 0
    while at < len(text):
        ch = text[at]
        if ch == '"':
            at = _string_end(text, at)
            if at is None:
                return None
            continue
        if ch in "{[":
            depth += 1
        elif ch in "}]":
            if depth == 0:
                return at
            depth -= 1
        elif ch == "," and depth == 0:
            return at
        at += 1
    return None


def _string_end(text: str, at: int) -> int | None:
    at += 1
    while at < len(text):
        if text[at] == "\\":
            at += 2
        elif text[at] == '"':
            return at + 1
        else:
            at += 1
    return None
