"""Secret-shaped text: found in note lines and redacted before anything is derived or returned.

What counts as a secret: the shapes in `secret_shapes` (known by their form) and values after
a credential's name (`secret_values`, with the rule that keeps placeholders and prose).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from attrs import frozen

from memory.domain.secret_shapes import SHAPES, Shape, shapes_in
from memory.domain.secret_values import (MARKER_START, assignment_spans, is_placeholder,
                                         may_hold_assignment, name_kind, value_is_secret)

MARKER = "[REDACTED:{kind}]"
# Text derived from notes holds markers where secrets were: reading it again still says
# which lines held secrets (health, memory_get), though the values are gone.
REDACTED_MARKER = re.compile(r"\[REDACTED:([a-z0-9-]+)\]")
KEY_BEGIN = re.compile(r"-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY( BLOCK)?-----")
KEY_END = re.compile(r"-----END ([A-Z0-9 ]*)PRIVATE KEY( BLOCK)?-----")
# Where spans of two kinds overlap, the more specific kind (earlier) names the union.
PRIORITY = {shape.kind: rank for rank, shape in enumerate(SHAPES)}


@frozen
class SecretFinding:
    line: int  # 1-based
    kind: str


@frozen
class SecretSpan:
    """Where a secret value sits, without the value: its 1-based line, the 0-based columns
    [start, end) of that line, and its kind."""

    line: int
    start: int
    end: int
    kind: str


def find_secrets(text: str) -> tuple[SecretSpan, ...]:
    """Every secret value in `text` (lines split on "\\n"), in reading order."""
    return _spans(text.split("\n"))


def contains_secret(text: str) -> bool:
    """Whether `text` holds anything `redact_text` would hide: for a title, an id, a query."""
    return bool(find_secrets(text))


def redact_lines(lines: Sequence[str]) -> tuple[tuple[str, ...], tuple[SecretFinding, ...]]:
    """Lines with secret values replaced by a visible marker, and where they were. The number
    of lines never changes, and redacting again changes nothing."""
    by_line: dict[int, list[SecretSpan]] = {}
    for span in _spans(lines):
        by_line.setdefault(span.line, []).append(span)
    out, findings = [], []
    for number, line in enumerate(lines, 1):
        spans = by_line.get(number, [])
        out.append(_replaced(line, spans))
        kinds = [s.kind for s in spans]
        if "[REDACTED:" in line:
            kinds += REDACTED_MARKER.findall(line)
        findings += [SecretFinding(number, kind) for kind in dict.fromkeys(kinds)]
    return tuple(out), tuple(findings)


def redact_text(text: str) -> str:
    return "\n".join(redact_lines(text.split("\n"))[0])


def redact_data(value: Any, name: str = "") -> Any:
    """Parsed front matter with secret-shaped values replaced by the marker.

    A value is judged alone and under its key, as its line reads (`password: hunter2`):
    YAML hands back the value without the name that makes it a secret.
    """
    if isinstance(value, dict):
        return {key: redact_data(item, str(key)) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_data(item, name) for item in value]
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return value
    text = str(value)
    clean = redact_text(text)
    if clean != text:
        return clean
    kind = secret_kind_under_name(name, text) if name and "\n" not in text else None
    return MARKER.format(kind=kind) if kind else value


def secret_kind_under_name(name: str, value: str) -> str | None:
    """The kind of secret `value` is when it stands under the key `name` (a front matter
    field, a form field), or None: `("db_password", "hunter2")` is one, `("password",
    "${DB_PASSWORD}")` and `("token_url", "https://...")` are not."""
    kind = name_kind(name)
    return kind if kind and MARKER_START not in value and value_is_secret(value) else None


def key_block_open_at(lines: Sequence[str], line: int) -> int | None:
    """The 1-based line where a private key block still open at `line` begins, if any."""
    for number in range(min(line, len(lines) + 1) - 1, 0, -1):
        text = lines[number - 1]
        if "PRIVATE KEY" not in text:  # cheap test first: most lines hold no marker
            continue
        if KEY_END.search(text):
            return None
        if KEY_BEGIN.search(text):
            return number
    return None


def _spans(lines: Sequence[str]) -> tuple[SecretSpan, ...]:
    found: list[SecretSpan] = []
    in_key = False
    for number, line in enumerate(lines, 1):
        # A private key block is hidden whole, its BEGIN and END lines included.
        if in_key or KEY_BEGIN.search(line):
            in_key = not KEY_END.search(line)
            found.append(SecretSpan(number, 0, len(line), "private-key"))
            continue
        found += (SecretSpan(number, start, end, kind) for start, end, kind in _line_spans(line))
    return tuple(found)


def _line_spans(line: str) -> tuple[tuple[int, int, str], ...]:
    short = len(line) <= KEPT_LINE_CHARS
    if short and line in _CLEAN_LINES:
        return ()
    found = _found_line_spans(line)
    if short and not found:
        if len(_CLEAN_LINES) >= KEPT_LINES:
            _CLEAN_LINES.clear()
        _CLEAN_LINES[line] = None
    return found


# Searches cite the same lines again and again (titles, headings, a note's hot lines), and
# a line's spans depend on its text alone. Only lines found clean are remembered, so no
# secret is ever kept here; long lines, and lines holding a secret, are judged each time.
KEPT_LINE_CHARS = 400
KEPT_LINES = 16384
_CLEAN_LINES: dict[str, None] = {}


def _found_line_spans(line: str) -> tuple[tuple[int, int, str], ...]:
    lowered = line.lower()
    found = [span for shape in shapes_in(lowered) for span in _shape_spans(shape, line)]
    if may_hold_assignment(line, lowered):
        found += assignment_spans(line)
    return tuple(_merged(found))


def _shape_spans(shape: Shape, line: str) -> list[tuple[int, int, str]]:
    spans = []
    for found in shape.pattern.finditer(line):
        start, end = found.span("value") if "value" in shape.pattern.groupindex else found.span()
        while end > start and line[end - 1].isspace():
            end -= 1
        value = line[start:end]
        if not value or value.startswith(MARKER_START):  # hidden already: a second pass is a no-op
            continue
        if (shape.judged and is_placeholder(value)) or (shape.check and not shape.check(value)):
            continue
        spans.append((start, end, shape.kind))
    return spans


def _merged(spans: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """Overlapping spans become their union, so no part of either value survives."""
    merged: list[tuple[int, int, str]] = []
    for start, end, kind in sorted(spans):
        if merged and start < merged[-1][1]:
            last_start, last_end, last_kind = merged[-1]
            better = min(last_kind, kind, key=lambda k: PRIORITY.get(k, len(PRIORITY)))
            merged[-1] = (last_start, max(last_end, end), better)
        else:
            merged.append((start, end, kind))
    return merged


def _replaced(line: str, spans: list[SecretSpan]) -> str:
    if not spans:
        return line
    if spans[0].kind == "private-key":
        return MARKER.format(kind="private-key")
    parts, at = [], 0
    for span in spans:
        parts += [line[at:span.start], MARKER.format(kind=span.kind)]
        at = span.end
    return "".join(parts) + line[at:]
