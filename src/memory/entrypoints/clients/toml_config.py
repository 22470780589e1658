"""Merge or remove our `[mcp_servers.ai-memory]` table in a TOML config, keeping the rest.

A new table is appended as text and an untouched one is cut out as text, so an uninstall
gives back the previous bytes; anything else goes through tomlkit, which keeps comments and
other tables. Every result is parsed again and must hold exactly the data we meant.
"""

from __future__ import annotations

import copy
import re
import tomllib
from collections.abc import Sequence
from typing import Any

import tomlkit
import tomlkit.items
from tomlkit.exceptions import TOMLKitError

from memory.entrypoints.clients.errors import ConfigSyntaxError, UneditableConfig
from memory.entrypoints.clients.target import ServerEntry

_HEADER = re.compile(r"^[ \t]*\[")  # a table or array-of-tables header line


class TomlConfigEditor:
    """The TOML flavour of a config editor: text in, text out (None: delete the file)."""

    def upsert(self, text: str | None, entry: ServerEntry) -> str:
        if not text:
            return _block(entry)
        doc = _parse(text)
        data = doc.unwrap()
        servers = data.get(entry.container)
        if servers is not None and not isinstance(servers, dict):
            raise ConfigSyntaxError(f"'{entry.container}' is not a table")
        current = (servers or {}).get(entry.name)
        wanted = entry.merged(current)
        if current == wanted:
            return text
        expected = copy.deepcopy(data)
        expected.setdefault(entry.container, {})[entry.name] = wanted
        if current is None:
            # a blank line before our table; a file without a final newline gets just one
            # newline, so that cutting the table can tell the two apart
            newline = "\r\n" if "\r\n" in text else "\n"
            appended = text + newline + _block(entry).replace("\n", newline)
            if _holds(appended, expected):
                return appended
        edited = _try(lambda: _edit_with_tomlkit(doc, entry, wanted))
        if edited is not None and _holds(edited, expected):
            return edited
        raise UneditableConfig(
            f"could not merge into '{entry.container}' safely; the file was left untouched: "
            "add this table by hand", snippet=_block(entry))

    def remove(self, text: str | None, entry: ServerEntry, *,
               previous: Sequence[str] = ()) -> str | None:
        """Cut our table out. `previous` are earlier versions of the file (our backups,
        newest first); with none that lacks our table, we created the file and an
        otherwise empty result deletes it."""
        if text is None or not text.strip():
            return text
        doc = _parse(text)
        data = doc.unwrap()
        servers = data.get(entry.container)
        if not isinstance(servers, dict) or entry.name not in servers:
            return text
        expected = copy.deepcopy(data)
        del expected[entry.container][entry.name]
        if not expected[entry.container]:
            del expected[entry.container]
        accepted = [expected]
        if entry.container not in expected:  # an explicit empty [table] header may stay
            accepted.append({**expected, entry.container: {}})
        for attempt in (lambda: _cut_block(text, entry), lambda: _remove_with_tomlkit(doc, entry)):
            edited = _try(attempt)
            if edited is not None and _holds(edited, *accepted):
                created_by_us = not any(_lacks_entry(old, entry) for old in previous)
                return None if not edited.strip() and created_by_us else edited
        raise UneditableConfig(
            f"could not remove [{entry.container}.{entry.name}] safely; the file was left "
            "untouched: delete that table by hand", snippet=_block(entry))

    def entry_names(self, text: str | None, container: str) -> list[str]:
        """The server names in `container` (ConfigSyntaxError if the file does not parse)."""
        if not text:
            return []
        servers = _parse(text).unwrap().get(container)
        return list(servers) if isinstance(servers, dict) else []


def _parse(text: str) -> tomlkit.TOMLDocument:
    try:
        tomllib.loads(text)  # the strict judge: clients parse TOML 1.0 strictly too
        return tomlkit.parse(text)
    except (TOMLKitError, tomllib.TOMLDecodeError) as error:
        raise ConfigSyntaxError(f"not valid TOML: {error}") from error


def _lacks_entry(text: str, entry: ServerEntry) -> bool:
    try:
        servers = tomllib.loads(text).get(entry.container)
    except tomllib.TOMLDecodeError:
        return False
    return not (isinstance(servers, dict) and entry.name in servers)


def _try(edit) -> str | None:
    """An edit tomlkit refuses (odd layouts: dotted keys, inline tables) is no result;
    the caller then leaves the file alone and says what to do by hand."""
    try:
        return edit()
    except (TOMLKitError, KeyError, TypeError, ValueError):
        return None


def _holds(text: str, *accepted: dict[str, Any]) -> bool:
    """Both tomlkit and the strict stdlib parser read `text` as one of `accepted`."""
    try:
        parsed = tomlkit.parse(text).unwrap()
        strict = tomllib.loads(text)
    except (TOMLKitError, tomllib.TOMLDecodeError):
        return False
    return any(parsed == value and strict == value for value in accepted)


def _block(entry: ServerEntry) -> str:
    """`[container.name]` with our fields, as tomlkit writes it."""
    doc = tomlkit.document()
    servers = tomlkit.table(is_super_table=True)
    table = tomlkit.table()
    for key, value in entry.fields.items():
        table.add(key, value)
    servers.add(entry.name, table)
    doc.add(entry.container, servers)
    return doc.as_string()


def _edit_with_tomlkit(doc: tomlkit.TOMLDocument, entry: ServerEntry,
                       wanted: dict[str, Any]) -> str:
    doc = copy.deepcopy(doc)
    if entry.container not in doc:
        doc.add(entry.container, tomlkit.table(is_super_table=True))
    servers = doc[entry.container]
    current = servers.get(entry.name)
    if not isinstance(current, dict):
        inline = isinstance(servers, tomlkit.items.InlineTable)
        table = tomlkit.inline_table() if inline else tomlkit.table()
        for key, value in wanted.items():
            table.add(key, value)
        servers[entry.name] = table
        return doc.as_string()
    for key in [key for key in current if key not in wanted]:  # the other transport's keys
        del current[key]
    for key, value in wanted.items():
        if current.get(key) != value:
            current[key] = value
    return doc.as_string()


def _remove_with_tomlkit(doc: tomlkit.TOMLDocument, entry: ServerEntry) -> str:
    doc = copy.deepcopy(doc)
    servers = doc[entry.container]
    del servers[entry.name]
    if not servers and getattr(servers, "is_super_table", lambda: False)():
        del doc[entry.container]
    return doc.as_string()


def _cut_block(text: str, entry: ServerEntry) -> str | None:
    """Cut the `[container.name]` table as lines: the inverse of appending `_block`."""
    header = re.compile(
        rf"^[ \t]*\[[ \t]*{re.escape(entry.container)}[ \t]*\.[ \t]*"
        rf"(?:{re.escape(entry.name)}|\"{re.escape(entry.name)}\"|'{re.escape(entry.name)}')"
        r"[ \t]*\][ \t]*(?:#.*)?$")
    lines = text.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if header.match(line.rstrip("\r\n"))]
    if len(starts) != 1:
        return None
    first = starts[0]
    last = first + 1
    while last < len(lines) and not _HEADER.match(lines[last]):
        last += 1
    # comment lines closing the table belong to what follows (or to the user, at the end)
    while last - 1 > first and lines[last - 1].lstrip().startswith("#"):
        last -= 1
    before, after = "".join(lines[:first]), "".join(lines[last:])
    if not after:  # the newline `upsert` put in front of the table
        before = before[:-2] if before.endswith("\r\n") else before.removesuffix("\n")
    return before + after
