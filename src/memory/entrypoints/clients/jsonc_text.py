"""A position-keeping reader of JSON with comments, so edits can splice text and keep the rest.

It reads the JSONC/JSON5 forms config files use (comments, trailing commas, single quotes,
bare keys); it is never the judge of validity: callers parse with json/json5 first and
parse every edited text again before trusting it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

import json5

_SPACE = " \t\r\n\v\f\ufeff\u00a0\u2028\u2029"
_SPACES = re.compile(f"[{_SPACE}]+")
_BARE_KEY = re.compile(r"[A-Za-z_$][\w$]*")
_SCALAR = re.compile(f"[^,:\\[\\]{{}}\"'/{_SPACE}]+")
_STRINGS = {
    "\"": re.compile(r'"(?:[^"\\\n]|\\[\s\S])*"'),
    "'": re.compile(r"'(?:[^'\\\n]|\\[\s\S])*'"),
}


class JsoncScanError(ValueError):
    """The text is not in the subset this reader understands."""


@dataclass(frozen=True)
class JsonNode:
    """A value's span in the text; objects also list their members."""

    kind: str  # "object", "array" or "scalar"
    start: int
    end: int  # exclusive
    members: tuple[JsonMember, ...] = ()

    def member(self, key: str) -> JsonMember | None:
        """The member parsers would keep: the last one with this key."""
        found = [m for m in self.members if m.key == key]
        return found[-1] if found else None


@dataclass(frozen=True)
class JsonMember:
    key: str
    key_start: int
    value: JsonNode
    comma: int | None  # offset of the comma right after the value, if there is one


@dataclass(frozen=True)
class JsoncText:
    """Parsed text: the root value and where every comment is."""

    text: str
    root: JsonNode
    comments: tuple[tuple[int, int], ...]

    @classmethod
    def scan(cls, text: str) -> JsoncText:
        reader = _Reader(text)
        root = reader.value()
        reader.skip()
        if reader.pos != len(text):
            raise JsoncScanError(f"unexpected text at offset {reader.pos}")
        return cls(text=text, root=root, comments=tuple(reader.comments))

    def comments_within(self, start: int, end: int) -> list[tuple[int, int]]:
        return [c for c in self.comments if start <= c[0] and c[1] <= end]

    def find_object(self, path: tuple[str, ...]) -> JsonNode | None:
        node = self.root
        for key in path:
            if node.kind != "object":
                return None
            member = node.member(key)
            if member is None:
                return None
            node = member.value
        return node if node.kind == "object" else None

    @property
    def newline(self) -> str:
        return "\r\n" if "\r\n" in self.text else "\n"

    def line_indent(self, pos: int) -> str:
        """Leading spaces/tabs of the line holding `pos`."""
        start = self.text.rfind("\n", 0, pos) + 1
        line = self.text[start:pos]
        return line[: len(line) - len(line.lstrip(" \t"))]

    def only_space_before(self, pos: int) -> bool:
        start = self.text.rfind("\n", 0, pos) + 1
        return self.text[start:pos].strip(" \t") == ""

    @property
    def indent_unit(self) -> str:
        """The file's indentation step, read from the root's first member (default 2 spaces)."""
        root = self.root
        if root.kind == "object" and root.members and self.is_multiline(root):
            indent = self.line_indent(root.members[0].key_start)
            if indent:
                return indent
        return "  "

    def is_multiline(self, node: JsonNode) -> bool:
        if node.members:
            return "\n" in self.text[node.start:node.members[0].key_start]
        return "\n" in self.text[node.start:node.end]

    def render(self, value: object, *, base: str, multiline: bool) -> str:
        """`value` as JSON text placed at indentation `base`."""
        if not multiline:
            return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
        text = json.dumps(value, ensure_ascii=False, indent=self.indent_unit)
        return text.replace("\n", self.newline + base)


def _decode_key(quoted: str) -> str:
    if "\\" not in quoted:
        return quoted[1:-1]
    if quoted.startswith("\""):
        try:
            return str(json.loads(quoted))
        except ValueError:
            pass  # a JSON5-only escape
    return str(json5.loads(quoted))  # rare, slow path


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.comments: list[tuple[int, int]] = []

    def fail(self, what: str) -> JsoncScanError:
        return JsoncScanError(f"{what} at offset {self.pos}")

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def skip(self) -> None:
        text, size = self.text, len(self.text)
        while self.pos < size:
            spaces = _SPACES.match(text, self.pos)
            if spaces:
                self.pos = spaces.end()
            elif text.startswith("//", self.pos):
                end = text.find("\n", self.pos)
                end = size if end < 0 else end
                if end > self.pos and text[end - 1] == "\r":
                    end -= 1
                self.comments.append((self.pos, end))
                self.pos = end
            elif text.startswith("/*", self.pos):
                end = text.find("*/", self.pos + 2)
                if end < 0:
                    raise self.fail("unterminated comment")
                self.comments.append((self.pos, end + 2))
                self.pos = end + 2
            else:
                return

    def value(self) -> JsonNode:
        self.skip()
        start, char = self.pos, self.peek()
        if char == "{":
            return self.object()
        if char == "[":
            return self.array()
        if char in ("\"", "'"):
            self.string()
            return JsonNode("scalar", start, self.pos)
        match = _SCALAR.match(self.text, self.pos)
        if not match:
            raise self.fail("expected a value")
        self.pos = match.end()
        return JsonNode("scalar", start, self.pos)

    def string(self) -> None:
        match = _STRINGS[self.text[self.pos]].match(self.text, self.pos)
        if not match:
            raise self.fail("unterminated string")
        self.pos = match.end()

    def key(self) -> tuple[str, int]:
        start = self.pos
        if self.peek() in ("\"", "'"):
            self.string()
            return _decode_key(self.text[start:self.pos]), start
        match = _BARE_KEY.match(self.text, self.pos)
        if not match:
            raise self.fail("expected a key")
        self.pos = match.end()
        return match.group(0), start

    def separator(self, close: str) -> int | None:
        """After a value: the offset of its comma, or None when `close` follows."""
        self.skip()
        char = self.peek()
        if char == ",":
            self.pos += 1
            return self.pos - 1
        if char != close:
            raise self.fail(f"expected ',' or '{close}'")
        return None

    def object(self) -> JsonNode:
        start = self.pos
        self.pos += 1
        members: list[JsonMember] = []
        while True:
            self.skip()
            if self.peek() == "}":
                self.pos += 1
                return JsonNode("object", start, self.pos, tuple(members))
            key, key_start = self.key()
            self.skip()
            if self.peek() != ":":
                raise self.fail("expected ':'")
            self.pos += 1
            value = self.value()
            members.append(JsonMember(key, key_start, value, self.separator("}")))

    def array(self) -> JsonNode:
        start = self.pos
        self.pos += 1
        while True:
            self.skip()
            if self.peek() == "]":
                self.pos += 1
                return JsonNode("array", start, self.pos)
            self.value()
            self.separator("]")
