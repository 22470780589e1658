"""Secret-shaped text: found in note lines and redacted before anything is derived or returned.

What counts as a secret: the shapes in `secret_shapes` (known by their form) and values after
a credential's name (`secret_values`, with the rule that keeps placeholders and prose), found
in the text as a reader sees it (`seen_text`: folded, invisible characters gone, emphasis and
wrapped lines seen through) and hidden in the text as written.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from typing import Any

from attrs import frozen

from memory.domain.dev_credentials import dev_credentials
from memory.domain.secret_shapes import SHAPES, Shape, is_key_material, shapes_in
from memory.domain.secret_values import (MARKER_START, assignment_spans, is_placeholder,
                                         may_hold_assignment, name_kind, value_is_secret)
from memory.domain.seen_text import WRAP, Reading, SeenText, wraps

MARKER = "[REDACTED:{kind}]"
# Text derived from notes holds markers where secrets were: reading it again still says
# which lines held secrets (health, memory_get), though the values are gone.
REDACTED_MARKER = re.compile(r"\[REDACTED:([a-z0-9-]+)\]")
KEY_ARMOUR = r"(?i)-{{3,}}[ \t]*{}[ \t]+[a-z0-9 ]*private[ \t]+key(?: block)?[ \t]*-{{3,}}"
KEY_BEGIN = re.compile(KEY_ARMOUR.format("begin"))
KEY_END = re.compile(KEY_ARMOUR.format("end"))
# Base64 ending a line (closing marks aside): a line of a key's body, or where one starts.
BASE64_TAIL = re.compile(r"(?<![A-Za-z0-9+/=])(?:[A-Za-z0-9+/]{16,}+={0,2}"
                         r"|[A-Za-z0-9+/]{2,15}={1,2})(?=[ \t`'\"]*\Z)")
PRIVATE_KEY = "private-key"
Span = tuple[int, int, str]  # [start, end) columns of one line, and the kind
# Where spans of two kinds overlap, the more specific kind (earlier) names the union.
PRIORITY = {shape.kind: rank for rank, shape in enumerate(SHAPES)}


@frozen
class SecretFinding:
    line: int  # 1-based
    kind: str
    # Every value of this kind on the line is a development credential (dev_credentials):
    # hidden all the same, but no reason to warn about the note each time it is read.
    local_dev: bool = False


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
        dev = dev_credentials(line, [(s.start, s.end, s.kind) for s in spans])
        real = {s.kind for s, local in zip(spans, dev) if not local}
        if "[REDACTED:" in line:  # a marker hides a value already: none is known to be dev
            kinds += REDACTED_MARKER.findall(line)
            real.update(REDACTED_MARKER.findall(line))
        findings += [SecretFinding(number, kind, kind not in real)
                     for kind in dict.fromkeys(kinds)]
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
    name, value = SeenText.of(name).text, SeenText.of(value).text
    kind = name_kind(name)
    return kind if kind and MARKER_START not in value and value_is_secret(value) else None


def key_block_open_at(lines: Sequence[str], line: int) -> int | None:
    """The 1-based line where a private key block still open at `line` begins, if any."""
    for number in range(min(line, len(lines) + 1) - 1, 0, -1):
        text = SeenText.of(lines[number - 1]).text
        if "-" not in text:  # cheap test first: most lines hold no armour
            continue
        if KEY_END.search(text):
            return None
        if KEY_BEGIN.search(text):
            return number
    return None


def _spans(lines: Sequence[str]) -> tuple[SecretSpan, ...]:
    found: dict[int, list[Span]] = {}
    seen = [SeenText.of(line) for line in lines]
    in_key = False
    for number, (line, text) in enumerate(zip(lines, seen), 1):
        # A private key block is hidden whole, its BEGIN and END lines included.
        if in_key or KEY_BEGIN.search(text.text):
            in_key = not KEY_END.search(text.text)
            found[number] = [(0, len(line), PRIVATE_KEY)]
        elif spans := _line_spans(line):
            found[number] = list(spans)
    for number, span in (*_wrapped_spans(lines, seen), *_key_body_spans(lines, seen)):
        found.setdefault(number, []).append(span)
    return tuple(SecretSpan(number, *span) for number in sorted(found)
                 for span in _merged(found[number]))


def _wrapped_spans(lines: Sequence[str],
                   seen: Sequence[SeenText]) -> Iterator[tuple[int, Span]]:
    """Values wrapped over lines (`ghp_0123` then `4567...` on the next line), judged on the
    lines joined where a break falls between two characters a token may hold."""
    for first, last in _chains([text.text for text in seen]):
        windows = {(first, last), (first + 1, last), (first, last - 1), (first + 1, last - 1)}
        for start, end in sorted(w for w in windows if w[1] > w[0]):
            yield from _window_spans(lines, start, end)


def _chains(seen: Sequence[str]) -> Iterator[tuple[int, int]]:
    """0-based [first, last] runs of lines a wrapped value may cover: each break between two
    token characters, every line inside a single token. A value's pieces may also stop short
    of a run's first or last line, which `_wrapped_spans` tries too."""
    first = None
    for at in range(len(seen) - 1):
        if not wraps(seen[at], seen[at + 1]):
            if first is not None:
                yield first, at
            first = None
            continue
        first = at if first is None else first
        if len(seen[at + 1].lstrip(" \t>").split()) != 1:  # prose: a value ends here
            yield first, at + 1
            first = None
    if first is not None:
        yield first, len(seen) - 1


def _window_spans(lines: Sequence[str], first: int, last: int) -> Iterator[tuple[int, Span]]:
    window = lines[first:last + 1]
    joined = SeenText.of("\n".join(window)).without(WRAP)
    starts = [0]
    for line in window[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    for view, reading in joined.views():
        for start, end, kind in _view_spans(view, reading, labels=False):
            if kind != PRIVATE_KEY:  # a key's body is judged as a block (`_key_body_spans`)
                spans = _per_line(starts, window, start, end, kind)
                yield from ((first + number, span) for number, span in spans)


def _per_line(starts: list[int], lines: Sequence[str], start: int, end: int,
              kind: str) -> Iterator[tuple[int, Span]]:
    """[start, end) of the joined text as spans of each line it covers; nothing for a span
    within one line (the line alone decides those)."""
    first, last = bisect_right(starts, start), bisect_right(starts, end - 1)
    if first == last:
        return
    for number in range(first, last + 1):
        line, at = lines[number - 1], starts[number - 1]
        indent = len(line) - len(line.lstrip(" \t>"))  # its indent or quote stays
        yield number, (max(start - at, indent), min(end - at, len(line)), kind)


def _key_body_spans(lines: Sequence[str],
                    seen: Sequence[SeenText]) -> Iterator[tuple[int, Span]]:
    """A private key's body without armour: base64 ending a line (`deploy_key: MIIE...`),
    then lines of base64 alone; hidden from the line that starts key material (DER, OpenSSH,
    PGP) to the run's end."""
    run: list[tuple[int, int, int, str]] = []  # line, columns of its base64, the base64
    for number, text in enumerate([*seen, SeenText.of("")], 1):
        tail = BASE64_TAIL.search(text.text)
        if tail is None or text.text[:tail.start()].strip(" \t>"):  # not base64 alone
            yield from _key_in(run)
            run = []
        if tail is not None:
            run.append((number, *text.source_span(*tail.span()), tail.group()))


def _key_in(run: list[tuple[int, int, int, str]]) -> list[tuple[int, Span]]:
    for at in range(len(run)):
        if is_key_material("".join(body for *_, body in run[at:at + 6])):
            return [(number, (start, end, PRIVATE_KEY)) for number, start, end, _ in run[at:]]
    return []


def _line_spans(line: str) -> tuple[Span, ...]:
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


def _found_line_spans(line: str) -> tuple[Span, ...]:
    seen = SeenText.of(line)
    return tuple(_merged([span for view, reading in seen.views()
                          for span in _view_spans(view, reading, labels=True)]))


def _view_spans(view: SeenText, reading: Reading, labels: bool) -> list[Span]:
    """Spans found in one view of a text, as columns of the text it was seen in."""
    text, lowered = view.text, view.text.lower()
    found = [span for shape in shapes_in(lowered) if reading > Reading.FORMS or not shape.judged
             for span in _shape_spans(shape, text)]
    if labels and reading == Reading.LABELS and may_hold_assignment(text, lowered):
        found += assignment_spans(text)
    return [(*view.source_span(start, end), kind) for start, end, kind in found]


def _shape_spans(shape: Shape, line: str) -> list[Span]:
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


def _merged(spans: list[Span]) -> list[Span]:
    """Overlapping spans become their union, so no part of either value survives."""
    merged: list[Span] = []
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
    parts, at = [], 0
    for span in spans:
        parts += [line[at:span.start], MARKER.format(kind=span.kind)]
        at = span.end
    return "".join(parts) + line[at:]
