"""Cutting a note's lines into heading-aware chunks, the unit that is indexed and cited."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from attrs import frozen

from memory.domain.markdown import marked, parse_heading
from memory.domain.notes import Chunk

FRONT_MATTER_TITLE = re.compile(r"^title\s*:")

# Bump whenever chunk boundaries, chunk context or the indexed text change: an index whose
# generation records another version is rebuilt from the notes by the next refresh.
# 3: secret values replaced before chunking; note paths escaped where names are not text.
CHUNKING_VERSION = 3


@frozen
class _Section:
    heading: str  # heading path, " > " separated
    level: int  # 0 for text before the first heading
    first: int
    last: int


def _sections(lines: Sequence[str], start: int) -> list[_Section]:
    sections: list[_Section] = []
    stack: list[tuple[int, str]] = []
    path, level, first = "", 0, start
    for no, line, code in marked(lines, start):
        found = None if code else parse_heading(line)
        if found is None:
            continue
        if no > first:
            sections.append(_Section(path, level, first, no - 1))
        level, text = found
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, text))
        path, first = " > ".join(t for _, t in stack if t), no
    if first <= len(lines):
        sections.append(_Section(path, level, first, len(lines)))
    return sections


def _trim(lines: Sequence[str], start: int, end: int) -> tuple[int, int] | None:
    while start <= end and not lines[start - 1].strip():
        start += 1
    while end >= start and not lines[end - 1].strip():
        end -= 1
    return (start, end) if start <= end else None


def _windows(first: int, last: int, window: int, overlap: int) -> Iterator[tuple[int, int]]:
    start = first
    while True:
        end = min(start + window - 1, last)
        yield start, end
        if end >= last:
            return
        start += window - overlap


def _section_spans(lines: Sequence[str], sections: list[_Section], window: int,
                   overlap: int) -> list[tuple[str, int, int]]:
    spans: list[tuple[str, int, int]] = []
    for i, sec in enumerate(sections):
        bounds = _trim(lines, sec.first, sec.last)
        if bounds is None:
            continue
        nested_next = i + 1 < len(sections) and sections[i + 1].level > sec.level
        if sec.level and bounds == (sec.first, sec.first) and nested_next:
            continue  # a bare parent heading: its subsections carry it in their heading path
        previous: tuple[int, int] | None = None
        for start, end in _windows(*bounds, window, overlap):
            span = _trim(lines, start, end)
            if span is None or (previous and previous[0] <= span[0] and span[1] <= previous[1]):
                continue
            spans.append((sec.heading, *span))
            previous = span
    return spans


def _fallback_line(lines: Sequence[str], body_start: int) -> int | None:
    """Line cited for a note without body text: its front matter title, else any text."""
    for no in range(2, min(body_start - 1, len(lines) + 1)):
        if FRONT_MATTER_TITLE.match(lines[no - 1]):
            return no
    return next((no for no, line in enumerate(lines, 1) if line.strip()), None)


def chunk_context(title: str, heading: str, date: str | None, ticket: str | None = None) -> str:
    """What is indexed along with a chunk's lines; the title is not repeated by the heading.

    A ticket note's id leads the context so `ALPHA-142` finds it even when only the
    folder names the ticket.
    """
    if ticket and ticket.lower() in f"{title} {heading}".lower():
        ticket = None
    if title and (heading == title or heading.startswith(f"{title} > ")):
        title = ""
    return " | ".join(p for p in (ticket, title, heading, date) if p)


def chunk_lines(lines: Sequence[str], *, memory_id: str, path: str, title: str,
                date: str | None = None, window: int = 8, overlap: int = 2,
                body_start: int = 1, ticket: str | None = None) -> tuple[Chunk, ...]:
    """Cut a note's body (from `body_start`, a line of the file) into heading-aware windows.

    Each section (text under one heading) becomes windows of at most `window` lines that
    share `overlap` lines, trimmed of blank edges; spans are lines of the whole file.
    """
    if window < 1 or not 0 <= overlap < window:
        raise ValueError(f"need window >= 1 and 0 <= overlap < window, got {window}/{overlap}")
    spans = _section_spans(lines, _sections(lines, body_start), window, overlap)
    if not spans:
        fallback = _fallback_line(lines, body_start)
        spans = [("", fallback, fallback)] if fallback else []
    return tuple(
        Chunk.create(memory_id=memory_id, path=path, heading=heading, start_line=start,
                     end_line=end, text="\n".join(lines[start - 1:end]),
                     context=chunk_context(title, heading, date, ticket), ordinal=ordinal)
        for ordinal, (heading, start, end) in enumerate(spans))
