"""A small, strict YAML emitter for front matter: only the value types a note's fields take.

Every value is one line except a mapping (one level, scalar values), so an edit can replace a
field by its lines without re-dumping what a person wrote around it.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping, Sequence

from memory.domain.errors import InvalidRequest

FieldValue = str | dt.date | tuple[str, ...] | Mapping[str, str]

FIELD_NAME = re.compile(r"[a-z_][a-z0-9_]*")
# Left unquoted, a string of these characters is read back as that same string...
PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-/]*(?: [A-Za-z0-9_.\-/]+)*")
# ...except YAML 1.1 (PyYAML) words for booleans and null.
KEYWORDS = frozenset("y n yes no true false on off null".split())
ESCAPES = {"\\": "\\\\", '"': '\\"', "\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _printable(char: str) -> bool:
    """YAML's printable set, less the characters a reader takes as line breaks or a BOM."""
    code = ord(char)
    if char in "\u2028\u2029\ufeff":
        return False
    return 0x20 <= code <= 0x7E or 0xA0 <= code <= 0xD7FF or 0xE000 <= code <= 0xFFFD \
        or code >= 0x10000


def _escaped(char: str) -> str:
    if char in ESCAPES:
        return ESCAPES[char]
    if _printable(char):
        return char
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}" if code <= 0xFFFF \
        else f"\\U{code:08x}"


def quoted(text: str) -> str:
    """A double-quoted YAML scalar that reads back as exactly `text`."""
    return '"' + "".join(_escaped(c) for c in text) + '"'


def scalar(value: str | dt.date) -> str:
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        return value.isoformat()  # read back as a date, which the parser turns into this text
    if not isinstance(value, str):
        raise InvalidRequest(f"front matter values are text or dates, not {type(value).__name__}")
    if PLAIN.fullmatch(value) and value.lower() not in KEYWORDS:
        return value
    return quoted(value)


def _name(key: str) -> str:
    if not isinstance(key, str) or not FIELD_NAME.fullmatch(key):
        raise InvalidRequest(f"not a front matter field name: {key!r}")
    return key


def render_field(key: str, value: FieldValue) -> tuple[str, ...]:
    """The lines of one field: `key: value`, `key: [a, b]`, or `key:` and indented pairs."""
    if isinstance(value, Mapping):
        return (f"{_name(key)}:",
                *(f"  {_name(k)}: {scalar(v)}" for k, v in value.items()))
    if isinstance(value, (tuple, list)):
        return (f"{_name(key)}: [{', '.join(scalar(v) for v in value)}]",)
    return (f"{_name(key)}: {scalar(value)}",)


def render_block(fields: Sequence[tuple[str, FieldValue]]) -> tuple[str, ...]:
    """A whole front matter block, `---` lines included, fields in the order given."""
    names = [key for key, _ in fields]
    if len(set(names)) != len(names):
        raise InvalidRequest(f"front matter fields given twice: {names}")
    return ("---", *(line for key, value in fields for line in render_field(key, value)), "---")
