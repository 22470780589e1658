"""Character budgets: no packet, read or name grows past its budget, and a cut line says so.

Cuts are made in text already redacted, and never inside a redaction marker or between the
two halves of a surrogate pair, so what is shown is never part of a secret or a broken
character.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from attrs import evolve

from memory.domain.evidence import EvidenceItem
from memory.domain.secret_values import MARKER_START

CUT = " [cut: {count:,} more characters]"
LONGEST_MARKER = 64  # `[REDACTED:<kind>]`, kinds are short
MAX_NAME_SHOWN = 300  # a title, heading or label: a name, not a text
MAX_DATA_DEPTH = 32


def cut_line(line: str, max_chars: int) -> str:
    """`line` if it fits in max_chars, else its start and a marker saying how many characters
    are left out, together within max_chars (when max_chars can hold the marker at all)."""
    if len(line) <= max_chars:
        return line
    keep = cut_point(line, max(0, max_chars - len(CUT.format(count=len(line)))))
    return line[:keep] + CUT.format(count=len(line) - keep)


def cut_point(text: str, at: int) -> int:
    """The nearest place at or before `at` where text may be cut."""
    at = max(0, min(at, len(text)))
    if 0 < at < len(text) and "\ud800" <= text[at - 1] <= "\udbff" \
            and "\udc00" <= text[at] <= "\udfff":
        at -= 1
    opened = text.rfind(MARKER_START, max(0, at - LONGEST_MARKER), at)
    if opened != -1 and text.find("]", opened, at) == -1:
        at = opened  # the marker would be split: leave it out whole
    return at


def shown_name(name: str) -> str:
    return cut_line(name, MAX_NAME_SHOWN)


def within(lines: Sequence[str], max_chars: int) -> tuple[list[str], bool]:
    """The leading lines that fit in max_chars (newlines counted), the first cut to fit
    when even it does not; and whether a line was cut."""
    shown: list[str] = []
    used = 0
    for line in lines:
        room = max_chars - used - (1 if shown else 0)
        if len(line) <= room:
            shown.append(line)
            used += len(line) + (1 if len(shown) > 1 else 0)
            continue
        if not shown:
            return [cut_line(line, max_chars)], True
        break
    return shown, False


def bounded_items(items: Sequence[EvidenceItem], budget_chars: int) -> tuple[EvidenceItem, ...]:
    """Items whose texts together stay within the packet's budget: each gets an equal share,
    a span running past its share ends early, and a single line longer than it is cut."""
    share = max(1, budget_chars // max(1, len(items)))
    return tuple(_bounded(item, share) for item in items)


def _bounded(item: EvidenceItem, share: int) -> EvidenceItem:
    title, heading = shown_name(item.title), shown_name(item.heading)
    if len(item.text) <= share and title is item.title and heading is item.heading:
        return item
    lines, cut = within(item.text.split("\n"), share)
    end = item.start_line + max(0, len(lines) - 1)
    return evolve(item, title=title, heading=heading, text="\n".join(lines),
                  end_line=min(end, item.end_line),
                  cut_lines=(*item.cut_lines, end) if cut else item.cut_lines)


def bounded_data(value: Any, max_chars: int) -> tuple[Any, bool]:
    """Parsed front matter cut to about max_chars of text (keys and values counted), and
    whether anything was left out: long strings are cut, the rest is dropped."""
    left = [max_chars]
    cut = [False]

    def walk(item: Any, depth: int) -> Any:
        if depth > MAX_DATA_DEPTH or left[0] <= 0:
            cut[0] = True
            return "[cut]"
        if isinstance(item, dict):
            out = {}
            for key, inner in item.items():
                if left[0] <= 0:
                    cut[0] = True
                    break
                left[0] -= len(str(key))
                out[str(key)] = walk(inner, depth + 1)
            return out
        if isinstance(item, (list, tuple)):
            out_list = []
            for inner in item:
                if left[0] <= 0:
                    cut[0] = True
                    break
                out_list.append(walk(inner, depth + 1))
            return out_list
        if isinstance(item, str):
            shown = cut_line(item, max(left[0], 40))
            cut[0] = cut[0] or shown is not item
            left[0] -= len(shown)
            return shown
        left[0] -= len(str(item))
        return item

    return walk(value, 0), cut[0]
