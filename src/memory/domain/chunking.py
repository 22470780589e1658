"""Reading Markdown text as a note: front matter, heading-aware chunks, path scopes, links.

Pure functions over a note's text and lines; the markdown adapter does the file I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from urllib.parse import unquote

from attrs import frozen

from memory.domain.notes import Chunk, ScopeKind

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
HEADING = re.compile(r"^ {0,3}(#{1,6})(?=[ \t]|$)(.*)$")
CLOSING_HASHES = re.compile(r"(?:^|[ \t]+)#+$")
WIKILINK = re.compile(r"\[\[([^\[\]\n]+?)\]\]")
MD_LINK = re.compile(r"\[[^\]\n]*\]\(\s*(<[^>\n]+>|[^)\s]+)(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)")
INLINE_CODE = re.compile(r"(`+)(.+?)(?<!`)\1(?!`)")
URL_SCHEME = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.\-]*:|//)")
TICKET_STEM = re.compile(r"^[A-Za-z][A-Za-z0-9]{1,14}-\d{1,7}$")
FRONT_MATTER_TITLE = re.compile(r"^title\s*:")
# Wikilinks may embed attachments (![[diagram.png]]); those are not notes.
ATTACHMENTS = frozenset(".png .jpg .jpeg .gif .svg .webp .bmp .pdf .mp3 .mp4 .webm .wav .ogg "
                        ".mov .canvas .excalidraw .zip".split())

# Bump whenever chunk boundaries, chunk context or the indexed text change: an index whose
# generation records another version is rebuilt from the notes by the next refresh.
CHUNKING_VERSION = 2

CROSS_CUTTING = {
    "decisions": ScopeKind.DECISION, "tools": ScopeKind.TOOL, "workflows": ScopeKind.REFERENCE,
    "references": ScopeKind.REFERENCE, "people": ScopeKind.PERSON, "areas": ScopeKind.AREA,
}


def split_lines(text: str) -> list[str]:
    """Lines as editors, grep and sed number them: split on LF, a CRLF's CR dropped."""
    if not text:
        return []
    parts = text.split("\n")
    if parts[-1] == "":
        parts.pop()
    return [p[:-1] if p.endswith("\r") else p for p in parts]


def split_front_matter(text: str) -> tuple[str | None, int]:
    """The YAML block opened by `---` on line 1 and closed by `---` or `...`, and the
    1-based line where the body starts. An unclosed block is body, not front matter."""
    lines = split_lines(text)
    if not lines or lines[0].lstrip("\ufeff").rstrip() != "---":
        return None, 1
    for i in range(1, len(lines)):
        if lines[i].rstrip() in ("---", "..."):
            return "\n".join(lines[1:i]), i + 2
    return None, 1


def _marked(lines: Sequence[str], start: int) -> Iterator[tuple[int, str, bool]]:
    """(line number, line, inside fenced code) from line `start` on; fences count as code."""
    fence: tuple[str, int] | None = None
    for no in range(max(1, start), len(lines) + 1):
        line = lines[no - 1]
        m = FENCE.match(line)
        if fence is None and m and not (m.group(1)[0] == "`" and "`" in m.group(2)):
            fence = (m.group(1)[0], len(m.group(1)))
            yield no, line, True
        elif fence is not None:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= fence[1] \
                    and not m.group(2).strip():
                fence = None
            yield no, line, True
        else:
            yield no, line, False


def _heading(line: str) -> tuple[int, str] | None:
    m = HEADING.match(line)
    if not m:
        return None
    return len(m.group(1)), CLOSING_HASHES.sub("", m.group(2).strip()).strip()


def first_heading(lines: Sequence[str], *, body_start: int = 1, level: int = 1) -> str | None:
    """Text of the first heading of that level outside code (a note's implicit title)."""
    for _, line, code in _marked(lines, body_start):
        found = None if code else _heading(line)
        if found and found[0] == level and found[1]:
            return found[1]
    return None


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
    for no, line, code in _marked(lines, start):
        found = None if code else _heading(line)
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


def _ticket_in(parts: Sequence[str]) -> str | None:
    """`Tickets/<ID>/...` (or `Tickets/<ID>.md`) among the parts after the owner's key."""
    for i, part in enumerate(parts[:-1]):
        if part.lower() != "tickets":
            continue
        if i + 2 < len(parts):
            return parts[i + 1].upper()
        stem = parts[-1].rsplit(".", 1)[0]
        if TICKET_STEM.match(stem):
            return stem.upper()
    return None


def scope_from_path(path: str) -> dict:
    """Scope a note's folder implies: repository, project, ticket, scope_kind, scope_id.

    `Repos/<key>/`, `Projects/<key>/` and the cross-cutting folders (Decisions, Tools, ...)
    are matched case-insensitively; the first such folder on the path decides.
    """
    parts = [p for p in path.replace("\\", "/").split("/") if p and p != "."]
    scope: dict = {"scope_kind": None, "scope_id": None, "repository": None,
                   "project": None, "ticket": None}
    dirs, owner_end = parts[:-1], 0
    for i, part in enumerate(dirs):
        key = part.lower()
        if key in ("repos", "repositories", "projects") and i + 1 < len(dirs):
            field, kind = ("project", ScopeKind.PROJECT) if key == "projects" \
                else ("repository", ScopeKind.REPO)
            scope.update({field: dirs[i + 1].lower(), "scope_kind": kind,
                          "scope_id": dirs[i + 1].lower()})
            owner_end = i + 2
            break
        if key in CROSS_CUTTING:
            scope["scope_kind"] = CROSS_CUTTING[key]
            return scope
    ticket = _ticket_in(parts[owner_end:])
    if ticket:
        scope.update(ticket=ticket, scope_kind=ScopeKind.TICKET, scope_id=ticket)
    return scope


def _wikilink_target(inner: str) -> str | None:
    target = inner.split("|", 1)[0].split("#", 1)[0].strip()
    dot = target.rfind(".")
    if not target or (dot > 0 and target[dot:].lower() in ATTACHMENTS):
        return None
    return target


def _markdown_target(raw: str) -> str | None:
    target = raw[1:-1].strip() if raw.startswith("<") else raw
    if URL_SCHEME.match(target):
        return None  # http(s), mailto, obsidian:, file:, protocol-relative
    target = unquote(target.split("#", 1)[0].split("?", 1)[0]).strip()
    return target if target.lower().endswith(".md") else None


def extract_links(lines: Sequence[str]) -> tuple[str, ...]:
    """Targets of wikilinks and relative Markdown links to notes, outside code, in order."""
    found: list[str] = []
    for _, line, code in _marked(lines, 1):
        if code or "[" not in line:
            continue
        line = INLINE_CODE.sub("", line)
        for m in WIKILINK.finditer(line):
            found.append(_wikilink_target(m.group(1)) or "")
        for m in MD_LINK.finditer(WIKILINK.sub("", line)):
            found.append(_markdown_target(m.group(1)) or "")
    return tuple(dict.fromkeys(t for t in found if t))
