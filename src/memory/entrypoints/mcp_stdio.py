"""The stdio transport at our edge: a line the SDK cannot parse is answered, never dropped.

`CheckedLines` is the stdin the SDK's reader takes: each line, as bytes, first goes through
the bounded parse every transport shares (jsonrpc_input: depth, numbers, strict UTF-8,
repeated keys, size); a line refused there is answered with its JSON-RPC error and never
reaches the SDK, whose reader would otherwise replace invalid UTF-8 and keep the last of two
repeated keys.

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
import os
import re
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager, suppress
from types import TracebackType
from typing import Any, BinaryIO

import anyio
import anyio.to_thread
from mcp.shared.message import SessionMessage
from mcp_types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError
from pydantic import ValidationError

from memory.entrypoints.jsonrpc_input import (MAX_MESSAGE_BYTES, MalformedMessage,
                                              parse_message, recover_keys)

log = logging.getLogger(__name__)

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


@contextmanager
def claimed_stdin() -> Iterator[BinaryIO]:
    """The client's stdin read from a private duplicate while fd 0 points at the null device,
    as the SDK's own reader arranges it: nothing else in the process, nor a child, reads the
    protocol's bytes. fd 0 is restored after; the duplicate is never closed, since a worker
    thread may still be blocked reading it."""
    try:
        fd = sys.stdin.fileno()
        wire = os.dup(fd)
        null = os.open(os.devnull, os.O_RDONLY)
    except (OSError, ValueError, AttributeError):  # no descriptor behind stdin: read it as is
        yield sys.stdin.buffer
        return
    try:
        os.dup2(null, fd)
    finally:
        os.close(null)
    try:
        yield os.fdopen(wire, "rb", closefd=False)
    finally:
        with suppress(OSError):
            os.dup2(wire, fd)


class CheckedLines:
    """The client's lines (bytes from `source`) as the SDK's stdin reader iterates them, each
    passed on only once `parse_message` takes it; the others are answered on the write
    stream handed to `answer_on` (the SDK creates it), a reply of the client is dropped."""

    def __init__(self, source: BinaryIO, limit: int = MAX_MESSAGE_BYTES):
        self._source = source
        self._limit = limit
        self._write: Any = None
        self._ready = anyio.Event()

    def answer_on(self, write: Any) -> None:
        self._write = write
        self._ready.set()

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        while True:
            line = await anyio.to_thread.run_sync(self._source.readline, self._limit + 1)
            if not line:
                return
            try:
                if len(line) > self._limit and not line.endswith(b"\n"):
                    await self._skip_rest()
                    raise MalformedMessage(INVALID_REQUEST, f"invalid request: a message over "
                                           f"{self._limit} bytes", recover_keys(
                                               line[:4096].decode("utf-8", "replace")))
                parse_message(line)
            except MalformedMessage as exc:
                await self._answer(exc)
                continue
            yield line.decode("utf-8")

    async def _skip_rest(self) -> None:
        while True:
            chunk = await anyio.to_thread.run_sync(self._source.readline, self._limit)
            if not chunk or chunk.endswith(b"\n"):
                return

    async def _answer(self, refused: MalformedMessage) -> None:
        if refused.is_reply:
            log.warning("dropped an unreadable reply from the client: %s", refused)
            return
        log.warning("answered an unreadable message with error %d: %s", refused.code, refused)
        await self._ready.wait()
        try:
            await self._write.send(SessionMessage(JSONRPCError(
                jsonrpc="2.0", id=refused.request_id,
                error=ErrorData(code=refused.code, message=refused.message))))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            log.debug("connection closing; the error reply was not sent")


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
        return _answer(PARSE_ERROR, f"parse error: the line is not JSON ({exc})", recover_keys(raw))
    except (ValueError, RecursionError):  # JSON, but too deep or a number over 4,300 digits
        return _answer(INVALID_REQUEST, f"invalid request: {detail}", recover_keys(raw))
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
