"""The stdio transport at our edge: a line the SDK cannot parse is answered, never dropped.

The SDK's stdio reader (mcp 2.3.0, `mcp.server.stdio.stdio_server`) validates each line
with pydantic and, when that fails, puts the exception on its read stream; the JSON-RPC
dispatcher only logs such an item (at debug level) and moves on, so the client waits for
an answer that never comes. That is a broken line, a string holding a lone surrogate
escape (half of a cut emoji, which pydantic's JSON parser refuses though Python's accepts
it) or a 5,000-digit number. `AnsweringReadStream` sits between reader and dispatcher: it
passes messages on and answers each such line with a JSON-RPC error, -32700 (not JSON) or
-32600 (JSON, but not a request we can take), carrying the request's id when it can be
recovered from the line, else null. The server stays up for the next request.
"""

from __future__ import annotations

import json
import logging
import re
from types import TracebackType
from typing import Any

import anyio
from mcp.shared.message import SessionMessage
from mcp_types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError
from pydantic import ValidationError

log = logging.getLogger(__name__)

_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"[ \t\n\r]*")
_HIGH, _LOW = r"\\u[dD][89abAB][0-9a-fA-F]{2}", r"\\u[dD][c-fC-F][0-9a-fA-F]{2}"
_LONE_SURROGATE = re.compile(rf"{_HIGH}(?!{_LOW})|(?<!{_HIGH}){_LOW}")
_MAX_MESSAGE = 300


class AnsweringReadStream:
    """The SDK's read stream, less the parse failures, which it answers on `write`."""

    def __init__(self, inner: Any, write: Any):
        self._inner = inner
        self._write = write

    @property
    def last_context(self):
        """The sender context of the last message (the dispatcher restores it per message)."""
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage:
        while True:
            item = await self._inner.receive()
            if not isinstance(item, Exception):
                return item
            reply = error_reply(item)
            if reply is None:
                log.warning("dropped an unreadable message from the client: %s", _first(item))
                continue
            log.warning("answered an unreadable message with error %d: %s",
                        reply.error.code, reply.error.message)
            try:
                await self._write.send(SessionMessage(reply))
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                log.debug("connection closing; the error reply was not sent")

    def __aiter__(self) -> AnsweringReadStream:
        return self

    async def __anext__(self) -> SessionMessage:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> AnsweringReadStream:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.aclose()


def error_reply(exc: Exception) -> JSONRPCError | None:
    """The JSON-RPC error answering the line behind exc; None for a reply from the client."""
    errors = exc.errors(include_url=False) if isinstance(exc, ValidationError) else []
    raw = next((e["input"] for e in errors
                if e["type"] == "json_invalid" and isinstance(e.get("input"), str)), None)
    if raw is not None:
        return _unparsable(raw, errors[0]["msg"])
    root = next((e["input"] for e in errors if len(e["loc"]) == 1
                 or (e["type"] == "missing" and len(e["loc"]) == 2)), None)
    return _answer(INVALID_REQUEST, "invalid request: not a JSON-RPC 2.0 request or "
                   f"notification ({_first(exc)})", root)


def _unparsable(raw: str, detail: str) -> JSONRPCError | None:
    detail = detail.removeprefix("Invalid JSON: ")
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        return _answer(PARSE_ERROR, f"parse error: the line is not JSON ({exc})", _scan(raw))
    except (ValueError, RecursionError):  # JSON, but too deep or a number over 4,300 digits
        return _answer(INVALID_REQUEST, f"invalid request: {detail}", _scan(raw))
    found = _LONE_SURROGATE.search(raw)
    if found is not None:
        detail = (f"a string holds a lone UTF-16 surrogate escape ({found.group()}, e.g. half "
                  "of a cut emoji); send well-formed Unicode")
    return _answer(INVALID_REQUEST, f"invalid request: {detail}", value)


def _answer(code: int, message: str, message_keys: object) -> JSONRPCError | None:
    """The error for a line whose top-level keys (with the id's value) are known; None for
    a response of the client to one of our requests (nobody waits for an answer to it)."""
    keys = message_keys if isinstance(message_keys, dict) else {}
    if "method" not in keys and ("result" in keys or "error" in keys):
        return None
    request_id = keys.get("id") if "method" in keys else None
    if isinstance(request_id, bool) or not isinstance(request_id, (str, int)):
        request_id = None
    text = message if len(message) <= _MAX_MESSAGE else message[:_MAX_MESSAGE - 3] + "..."
    return JSONRPCError(jsonrpc="2.0", id=request_id, error=ErrorData(code=code, message=text))


def _first(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        first = exc.errors(include_url=False, include_input=False)[0]
        return f"{'.'.join(str(p) for p in first['loc'][1:]) or 'message'}: {first['msg']}"
    return f"{type(exc).__name__}: {exc}"


def _scan(text: str) -> dict[str, object]:
    """The top-level keys of a JSON object that does not parse as a whole (a line cut
    short, or a value Python refuses), read one by one as far as they go; only the id's
    value is decoded."""
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
