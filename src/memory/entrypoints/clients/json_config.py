"""Merge or remove our server entry in a JSON/JSONC config file, keeping the user's text.

Edits splice text (so formatting and comments survive and an uninstall gives back the
previous bytes); every spliced result is parsed again and must hold exactly the data we
meant. When a splice cannot be proven right, strict JSON is rewritten with indent=2 and a
file with comments is left alone with the snippet to add by hand.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from typing import Any

import json5

from memory.entrypoints.clients.errors import ConfigSyntaxError, UneditableConfig
from memory.entrypoints.clients.jsonc_text import JsoncScanError, JsoncText, JsonMember, JsonNode
from memory.entrypoints.clients.target import ServerEntry

_BOM = "\ufeff"


class JsonConfigEditor:
    """The JSON and JSONC flavour of a config editor: text in, text out (None: delete)."""

    def upsert(self, text: str | None, entry: ServerEntry) -> str:
        if text is None or not text.strip(_BOM + " \t\r\n"):
            return json.dumps(entry.as_document(), indent=2, ensure_ascii=False) + "\n"
        bom, body = _split_bom(text)
        data = _parse(body)
        expected = _with_entry(data, entry)
        if expected == data:
            return text
        strict = _is_strict(body)
        spliced = _attempt(lambda: _splice_upsert(body, entry), expected, strict=strict)
        if spliced is not None:
            return bom + spliced
        if strict:
            return bom + json.dumps(expected, indent=2, ensure_ascii=False) + "\n"
        raise UneditableConfig(
            "the file has comments or JSON5 syntax we could not edit safely; it was left "
            f"untouched: add this member to its \"{entry.container}\" object by hand",
            snippet=_snippet(entry))

    def remove(self, text: str | None, entry: ServerEntry, *,
               previous: Sequence[str] = ()) -> str | None:
        """Cut our entry out. `previous` are earlier versions of the file (our backups,
        newest first): the newest one without our entry tells whether the file and the
        container existed before we wrote; with none, we made them and they go too."""
        if text is None or not text.strip(_BOM + " \t\r\n"):
            return text
        bom, body = _split_bom(text)
        data = _parse(body)
        if _without_entry(data, entry, keep_container=True) == data:
            return text
        prior = _prior(previous, entry)
        keep_container = prior is not None and entry.container in prior
        expected = _without_entry(data, entry, keep_container=keep_container)
        strict = _is_strict(body)
        if not expected and strict and prior is None:
            return None  # we created the file and only our entry was left
        accepted = [expected]
        if entry.container not in expected:  # comments inside may keep it, empty
            accepted.append({**expected, entry.container: {}})
        spliced = _attempt(lambda: _splice_remove(body, entry, keep_container), *accepted,
                           strict=strict)
        if spliced is not None:
            empty = not expected and prior is None and _is_empty_document(spliced)
            return None if empty else bom + spliced
        if strict:
            return bom + json.dumps(expected, indent=2, ensure_ascii=False) + "\n"
        raise UneditableConfig(
            "the file has comments or JSON5 syntax we could not edit safely; it was left "
            f"untouched: remove \"{entry.name}\" from its \"{entry.container}\" object by hand",
            snippet=_snippet(entry))

    def entry_names(self, text: str | None, container: str) -> list[str]:
        """The server names in `container` (ConfigSyntaxError if the file does not parse)."""
        if text is None or not text.strip(_BOM + " \t\r\n"):
            return []
        servers = _parse(_split_bom(text)[1]).get(container)
        return list(servers) if isinstance(servers, dict) else []


def _prior(previous: Sequence[str], entry: ServerEntry) -> dict[str, Any] | None:
    """The newest earlier version that parses and does not hold our entry."""
    for text in previous:
        try:
            data = _parse(_split_bom(text)[1])
        except ConfigSyntaxError:
            continue
        servers = data.get(entry.container)
        if not (isinstance(servers, dict) and entry.name in servers):
            return data
    return None


def _split_bom(text: str) -> tuple[str, str]:
    return (_BOM, text[1:]) if text.startswith(_BOM) else ("", text)


def _is_strict(body: str) -> bool:
    try:
        json.loads(body)
    except ValueError:
        return False
    return True


def _parse(body: str) -> dict[str, Any]:
    try:
        data = json.loads(body)
    except ValueError:
        try:
            data = json5.loads(body)
        except ValueError as error:
            raise ConfigSyntaxError(f"not valid JSON or JSONC: {error}") from error
    if not isinstance(data, dict):
        raise ConfigSyntaxError("expected a JSON object at the top level")
    return data


def _with_entry(data: dict[str, Any], entry: ServerEntry) -> dict[str, Any]:
    out = copy.deepcopy(data)
    servers = out.get(entry.container)
    if servers is None:
        out[entry.container] = {entry.name: dict(entry.fields)}
    elif not isinstance(servers, dict):
        raise ConfigSyntaxError(f"\"{entry.container}\" is not an object")
    else:
        servers[entry.name] = entry.merged(servers.get(entry.name))
    return out


def _without_entry(data: dict[str, Any], entry: ServerEntry, *,
                   keep_container: bool) -> dict[str, Any]:
    servers = data.get(entry.container)
    if not isinstance(servers, dict) or entry.name not in servers:
        return data
    out = copy.deepcopy(data)
    del out[entry.container][entry.name]
    if not out[entry.container] and not keep_container:
        del out[entry.container]
    return out


def _attempt(splice, *accepted: dict[str, Any], strict: bool) -> str | None:
    """Run a splice; keep its text only if it parses back to one of the `accepted` values
    (and is still strict JSON when the original was)."""
    try:
        text = splice()
        parsed = json.loads(text) if strict else json5.loads(text)
    except (JsoncScanError, ValueError):
        return None
    return text if any(parsed == value for value in accepted) else None


def _is_empty_document(text: str) -> bool:
    scanned = JsoncText.scan(text)
    return not scanned.root.members and not scanned.comments


def _snippet(entry: ServerEntry) -> str:
    return f"\"{entry.name}\": " + json.dumps(dict(entry.fields), indent=2, ensure_ascii=False)


# -- splicing ------------------------------------------------------------------------------

def _splice_upsert(body: str, entry: ServerEntry) -> str:
    scanned = JsoncText.scan(body)
    if scanned.root.kind != "object":
        raise JsoncScanError("root is not an object")
    container = scanned.root.member(entry.container)
    if container is None:
        return _insert_member(scanned, scanned.root, entry.container,
                              {entry.name: dict(entry.fields)})
    if container.value.kind != "object":
        if body[container.value.start:container.value.end] == "null":  # same as absent
            return _replace_value(scanned, scanned.root, container,
                                  {entry.name: dict(entry.fields)})
        raise JsoncScanError("container is not an object")
    ours = container.value.member(entry.name)
    if ours is None:
        return _insert_member(scanned, container.value, entry.name, dict(entry.fields))
    if ours.value.kind != "object":
        return _replace_value(scanned, container.value, ours, dict(entry.fields))
    current = json5.loads(body[ours.value.start:ours.value.end])
    wanted = entry.merged(current)
    for key in [key for key in current if key not in wanted]:  # the other transport's keys
        scanned, target = _our_object(body, entry)
        body = _remove_member(scanned, target, target.member(key))
    for key, value in wanted.items():
        if key in current and current[key] == value:
            continue
        scanned, target = _our_object(body, entry)
        body = _set_member(scanned, target, key, value)
    return body


def _our_object(body: str, entry: ServerEntry) -> tuple[JsoncText, JsonNode]:
    scanned = JsoncText.scan(body)
    target = scanned.find_object((entry.container, entry.name))
    if target is None:
        raise JsoncScanError("entry vanished while editing")
    return scanned, target


def _splice_remove(body: str, entry: ServerEntry, keep_container: bool) -> str:
    scanned = JsoncText.scan(body)
    root = scanned.root
    container = root.member(entry.container) if root.kind == "object" else None
    if container is None or container.value.kind != "object":
        raise JsoncScanError("no container to remove from")
    servers = container.value
    ours = servers.member(entry.name)
    if ours is None:
        raise JsoncScanError("entry not found")
    alone = len(servers.members) == 1 and not scanned.comments_within(servers.start, servers.end)
    if alone and not keep_container:
        return _remove_member(scanned, root, container)
    return _remove_member(scanned, servers, ours)


def _set_member(scanned: JsoncText, obj: JsonNode, key: str, value: Any) -> str:
    member = obj.member(key)
    if member is None:
        return _insert_member(scanned, obj, key, value)
    return _replace_value(scanned, obj, member, value)


def _replace_value(scanned: JsoncText, obj: JsonNode, member: JsonMember, value: Any) -> str:
    text = scanned.text
    rendered = scanned.render(value, base=scanned.line_indent(member.key_start),
                              multiline=scanned.is_multiline(obj))
    return text[:member.value.start] + rendered + text[member.value.end:]


def _insert_member(scanned: JsoncText, obj: JsonNode, key: str, value: Any) -> str:
    """Append `key: value` as the object's last member, in the object's own layout."""
    text, newline = scanned.text, scanned.newline
    name = json.dumps(key, ensure_ascii=False)
    if not obj.members:
        inner = text[obj.start + 1:obj.end - 1]
        base = scanned.line_indent(obj.start)
        indent = base + scanned.indent_unit
        member = name + ": " + scanned.render(value, base=indent, multiline=True)
        if inner.strip(" \t\r\n") == "":
            return (text[:obj.start + 1] + newline + indent + member + newline + base
                    + text[obj.end - 1:])
        # only comments inside: keep them and put the member after them
        close = obj.end - 1
        return text[:close].rstrip(" \t") + indent + member + newline + base + text[close:]
    last = obj.members[-1]
    if scanned.is_multiline(obj):
        indent = scanned.line_indent(last.key_start)
        member = name + ": " + scanned.render(value, base=indent, multiline=True)
        line_end = _comment_line_end(scanned, last)
        if line_end is not None:  # `"a": 1, // note` stays on its line, with its comma
            if last.comma is None:
                return (text[:last.value.end] + "," + text[last.value.end:line_end]
                        + newline + indent + member + text[line_end:])
            return text[:line_end] + newline + indent + member + "," + text[line_end:]
        return text[:last.value.end] + "," + newline + indent + member + text[last.value.end:]
    separator = " "
    if len(obj.members) > 1:
        before = obj.members[-2]
        gap = text[(before.comma or before.value.end) + 1:last.key_start]
        separator = gap if gap.strip(" \t") == "" else " "
    member = name + ": " + scanned.render(value, base="", multiline=False)
    return text[:last.value.end] + "," + separator + member + text[last.value.end:]


def _comment_line_end(scanned: JsoncText, last: JsonMember) -> int | None:
    """If only an optional comma and comments follow the last value on its line, that
    line's end (before the newline); else None."""
    text = scanned.text
    line_end = text.find("\n", last.value.end)
    line_end = len(text) if line_end < 0 else line_end
    if line_end > 0 and text[line_end - 1] == "\r":
        line_end -= 1
    tail = text[last.value.end:line_end]
    if not scanned.comments_within(last.value.end, line_end):
        return None
    rest = tail
    for start, end in scanned.comments_within(last.value.end, line_end):
        rest = rest.replace(text[start:end], "", 1)
    if rest.replace(",", "", 1).strip(" \t") != "":
        return None
    return line_end


def _remove_member(scanned: JsoncText, obj: JsonNode, member: JsonMember) -> str:
    """Cut one member out; the exact inverse of `_insert_member` for what it inserts."""
    text = scanned.text
    index = obj.members.index(member)
    value_end = member.value.end
    if len(obj.members) == 1:
        if not scanned.comments_within(obj.start, obj.end):
            return text[:obj.start + 1] + text[obj.end - 1:]
        start = _end_of_last_comment(scanned, obj.start + 1, member.key_start) or obj.start + 1
        end = member.comma + 1 if member.comma is not None else value_end
        return text[:start] + text[end:]
    if index == 0:
        start = member.key_start
        if scanned.only_space_before(start):
            start = text.rfind("\n", 0, start) + 1
        end = _skip_rest_of_line(text, member.comma + 1)
        return text[:start] + text[end:]
    previous = obj.members[index - 1]
    gap_comments = scanned.comments_within(previous.value.end, member.key_start)
    if not gap_comments:
        return text[:previous.value.end] + text[value_end:]
    start = gap_comments[-1][1]
    if member.comma is not None:
        return text[:start] + text[member.comma + 1:]
    comma = previous.comma
    return text[:comma] + text[comma + 1:start] + text[value_end:]


def _end_of_last_comment(scanned: JsoncText, start: int, end: int) -> int | None:
    comments = scanned.comments_within(start, end)
    return comments[-1][1] if comments else None


def _skip_rest_of_line(text: str, pos: int) -> int:
    """Past trailing spaces and the newline, when nothing else follows on the line."""
    end = pos
    while end < len(text) and text[end] in " \t":
        end += 1
    if text.startswith("\r\n", end):
        return end + 2
    if text.startswith("\n", end):
        return end + 1
    return pos
