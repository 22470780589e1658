"""Front matter edited by lines: one field's lines replaced, every other byte kept.

Re-dumping parsed YAML would drop comments, reorder keys and re-quote what a person wrote,
so an edit finds the lines a top-level field spans and swaps those lines only.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from attrs import field, frozen

from memory.domain.markdown import split_front_matter
from memory.domain.errors import InvalidRequest
from memory.domain.note_text import NoteText

# A top-level key: quoted, or plain up to the first `:` followed by a blank or the line end.
KEY_LINE = re.compile(r"""^(?:"(?P<dq>[^"\\]*)"|'(?P<sq>[^']*)'"""
                      r"""|(?P<plain>[^\s#\-?:,\[\]{}&*!|>'"%@`][^#]*?))[ \t]*:(?:[ \t]|$)""")


@frozen(kw_only=True)
class FrontMatterBlock:
    """Where the block is and the [start, end) line indexes (0-based) of each top field."""

    present: bool
    close: int = 0  # index of the closing `---` line: where new fields go
    fields: Mapping[str, tuple[int, int]] = field(factory=dict)


def _key(match: re.Match[str]) -> str:
    return next(v for v in (match["dq"], match["sq"], match["plain"]) if isinstance(v, str))


def _refuse(line: int, why: str) -> InvalidRequest:
    return InvalidRequest(f"front matter line {line} {why}; this edit changes front matter "
                          "one field per line, so edit that line first (replace_lines)")


def block_of(lines: Sequence[str]) -> FrontMatterBlock:
    """The note's front matter layout; InvalidRequest when it is not one field per line."""
    yaml_text, body_start = split_front_matter("\n".join(lines))
    if yaml_text is None:
        return FrontMatterBlock(present=False)
    close = body_start - 2
    fields: dict[str, list[int]] = {}
    current: str | None = None
    for index in range(1, close):
        line = lines[index]
        match = KEY_LINE.match(line)
        if match:
            current = _key(match)
            if current in fields:
                raise _refuse(index + 1, f"repeats the field {current!r}")
            fields[current] = [index, index + 1]
        elif not line.strip():
            continue  # blank: belongs to a value only if an indented line follows
        elif line.startswith("#"):
            current = None
        elif line[0] in " \t-" and current is not None:
            fields[current][1] = index + 1
        else:
            raise _refuse(index + 1, "is not a `key: value` field")
    return FrontMatterBlock(present=True, close=close,
                            fields={k: (v[0], v[1]) for k, v in fields.items()})


def field_lines(text: NoteText, key: str) -> tuple[str, ...] | None:
    """The lines a top-level field spans now, or None when the note has no such field."""
    block = block_of(text.lines)
    if key not in block.fields:
        return None
    start, end = block.fields[key]
    return text.lines[start:end]


def set_field(text: NoteText, key: str, new: Sequence[str] | None, *,
              first: bool = False) -> NoteText:
    """The text with field `key` given these lines (None removes it); a new field goes at
    the end of the block (`first`: at its top), a note without a block gets one."""
    block = block_of(text.lines)
    if not block.present:
        return text if new is None else text.replaced(0, 0, ["---", *new, "---"])
    at = 1 if first else block.close
    start, end = block.fields.get(key, (at, at))
    return text.replaced(start, end, new or ())
