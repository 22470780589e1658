"""Markdown as notes write it: lines, front matter, fences, headings, inline code and links.

The one parser of note text: the index, the graph and every tool read notes through it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from urllib.parse import unquote

from attrs import frozen

from memory.domain.notes import is_markdown

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
HEADING = re.compile(r"^ {0,3}(#{1,6})(?=[ \t]|$)(.*)$")
CLOSING_HASHES = re.compile(r"(?:^|[ \t]+)#+$")
WIKILINK = re.compile(r"\[\[([^\[\]\n]+?)\]\]")
MD_LINK = re.compile(r"\[[^\]\n]*\]\(\s*(<[^>\n]+>|[^)\s]+)(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)")
INLINE_CODE = re.compile(r"(`+)(.+?)(?<!`)\1(?!`)")
URL_SCHEME = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.\-]*:|//)")
EXTERNAL = re.compile(r"^(?:[a-z][a-z0-9+.\-]*://|mailto:|tel:|data:|//)", re.IGNORECASE)
FIELD = re.compile(r"^([^\s#:][^:]*?)\s*:(?:\s|$)")
# Wikilinks may embed attachments (![[diagram.png]]); those are not notes.
ATTACHMENTS = frozenset(".png .jpg .jpeg .gif .svg .webp .bmp .pdf .mp3 .mp4 .webm .wav .ogg "
                        ".mov .canvas .excalidraw .zip".split())
BOM = "\ufeff"


@frozen
class Link:
    """A note a line links to: the target as written (cleaned) and where it is written."""

    target: str
    line: int  # 1-based line of its first occurrence


def split_lines(text: str) -> list[str]:
    """Lines as editors, grep and sed number them: split on LF, a CRLF's CR dropped."""
    if not text:
        return []
    parts = text.split("\n")
    if parts[-1] == "":
        parts.pop()
    return [p[:-1] if p.endswith("\r") else p for p in parts]


def front_matter_lines(lines: Sequence[str]) -> tuple[str | None, int]:
    """The YAML block opened by `---` on line 1 (after a BOM, if any) and closed by `---`
    or `...`, and the 1-based line where the body starts. An unclosed block is body."""
    if not lines or lines[0].lstrip(BOM).rstrip() != "---":
        return None, 1
    for i in range(1, len(lines)):
        if lines[i].rstrip() in ("---", "..."):
            return "\n".join(lines[1:i]), i + 2
    return None, 1


def split_front_matter(text: str) -> tuple[str | None, int]:
    """front_matter_lines of a whole text."""
    return front_matter_lines(split_lines(text))


def marked(lines: Sequence[str], start: int = 1) -> Iterator[tuple[int, str, bool]]:
    """(line number, line, inside fenced code) from line `start` on; fences count as code.

    A fence is three or more backticks or tildes; it closes on a fence of the same
    character at least as long, so a four-backtick block may quote a three-backtick one.
    """
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


def parse_heading(line: str) -> tuple[int, str] | None:
    """(level, text) of an ATX heading line; None for any other line."""
    m = HEADING.match(line)
    if not m:
        return None
    return len(m.group(1)), CLOSING_HASHES.sub("", m.group(2).strip()).strip()


def first_heading(lines: Sequence[str], *, body_start: int = 1, level: int = 1) -> str | None:
    """Text of the first heading of that level outside code (a note's implicit title)."""
    for _, line, code in marked(lines, body_start):
        found = None if code else parse_heading(line)
        if found and found[0] == level and found[1]:
            return found[1]
    return None


def link_target(raw: str) -> str:
    """The note part of a name as written anywhere (a wikilink with display text or an
    anchor, an angle-bracketed path, a bare name); "" for URLs and bare anchors."""
    text = (raw or "").strip()
    if text.startswith("[[") and text.endswith("]]"):
        text = text[2:-2]
    text = text.split("|", 1)[0].split("#", 1)[0].strip()
    if text.startswith("<") and text.endswith(">"):
        text = text[1:-1].strip()
    if EXTERNAL.match(text):
        return ""
    return text.replace("\\", "/")


def _wikilink_target(inner: str) -> str:
    target = link_target(inner)
    dot = target.rfind(".")
    if dot > 0 and target[dot:].lower() in ATTACHMENTS:
        return ""
    return target


def _markdown_target(raw: str) -> str:
    target = raw[1:-1].strip() if raw.startswith("<") else raw
    if URL_SCHEME.match(target):
        return ""  # http(s), mailto, obsidian:, file:, protocol-relative
    target = unquote(target.split("#", 1)[0].split("?", 1)[0]).strip()
    return target if is_markdown(target) else ""


def _line_targets(line: str) -> Iterator[str]:
    line = INLINE_CODE.sub("", line)
    for m in WIKILINK.finditer(line):
        yield _wikilink_target(m.group(1))
    for m in MD_LINK.finditer(WIKILINK.sub("", line)):
        yield _markdown_target(m.group(1))


def links(lines: Sequence[str], start: int = 1) -> tuple[Link, ...]:
    """Wikilinks and relative Markdown links to notes from line `start` on, outside fenced
    and inline code; each target once, at its first line."""
    found: dict[str, Link] = {}
    for no, line, code in marked(lines, start):
        if code or "[" not in line:
            continue
        for target in _line_targets(line):
            if target and target not in found:
                found[target] = Link(target, no)
    return tuple(found.values())


def field_line(lines: Sequence[str], key: str, value: str | None = None) -> int | None:
    """1-based line of a top-level front matter field, or of the line within it that holds
    value when one does; None when the note has no such field."""
    _, body_start = front_matter_lines(lines)
    first = None
    for no in range(2, body_start - 1):
        line = lines[no - 1]
        m = FIELD.match(line)
        if first is None:
            if m and m.group(1).strip().strip("\"'") == key:
                first = no
                if value and value in line:
                    return no
        elif m or (line.strip() and line[:1] not in (" ", "\t", "-")):
            break
        elif value and value in line:
            return no
    return first
