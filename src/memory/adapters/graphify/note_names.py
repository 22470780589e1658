"""Resolving a name written in a note (wikilink, path, memory_id, title, alias) to a note."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator, Sequence
from urllib.parse import unquote

from memory.domain.notes import Note

# Lower wins: an exact memory_id beats a path, which beats a file stem, a title, an alias.
_MEMORY_ID, _PATH, _STEM, _TITLE, _ALIAS = range(5)
_HOW = ("memory_id", "path", "stem", "title", "alias")
_EXTERNAL = re.compile(r"^(?:[a-z][a-z0-9+.\-]*://|mailto:|tel:|data:|//)", re.IGNORECASE)
_NOTE_SUFFIXES = ("", ".md", ".markdown", ".mdx")

_WIKILINK = re.compile(r"(?<!!)\[\[([^\[\]\n]+?)\]\]")
_MD_LINK = re.compile(r"(?<!!)\[[^\]\n]*\]\(\s*(?:<([^<>\n]+)>|([^)\s]+))[^)\n]*\)")


def clean_target(raw: str) -> str:
    """The note part of a link target: no brackets, display text, anchor or URL escapes."""
    text = (raw or "").strip()
    if text.startswith("[[") and text.endswith("]]"):
        text = text[2:-2]
    text = text.split("|", 1)[0].split("#", 1)[0].strip().strip("<>").strip()
    if "%" in text:
        text = unquote(text)
    if not text or _EXTERNAL.match(text):
        return ""
    return text.replace("\\", "/")


def front_matter_end(lines: Sequence[str]) -> int:
    """Index of the first body line (0 when the file has no front matter block)."""
    if not lines or lines[0].strip() != "---":
        return 0
    for i in range(1, min(len(lines), 400)):
        if lines[i].strip() in ("---", "..."):
            return i + 1
    return 0


def field_line(lines: Sequence[str], key: str, value: str | None = None) -> int | None:
    """1-based line of a front-matter field (of the line holding value, if it is found)."""
    end = front_matter_end(lines)
    start = None
    pattern = re.compile(rf"^{re.escape(key)}\s*:")
    for i in range(1, max(end - 1, 1)):
        line = lines[i]
        if start is None:
            if pattern.match(line):
                start = i
                if value and value in line:
                    return i + 1
        elif line[:1] not in (" ", "\t", "-") and line.strip():
            break
        elif value and value in line:
            return i + 1
    return None if start is None else start + 1


def body_links(lines: Sequence[str]) -> Iterator[tuple[str, int]]:
    """(raw target, 1-based line) of every wikilink and local Markdown link in the body."""
    fenced = False
    for i in range(front_matter_end(lines), len(lines)):
        line = lines[i]
        if line.strip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if fenced:
            continue
        for m in _WIKILINK.finditer(line):
            yield m.group(1), i + 1
        for m in _MD_LINK.finditer(line):
            target = clean_target(m.group(1) or m.group(2))
            if target and posixpath.splitext(target)[1].lower() in _NOTE_SUFFIXES:
                yield target, i + 1


class NoteNames:
    """Every way the notes of one build can be named, case-insensitive."""

    def __init__(self, notes: Sequence[Note]):
        self._names: dict[str, list[tuple[int, Note]]] = {}
        self._by_path: dict[str, Note] = {}
        self._by_base: dict[str, list[Note]] = {}
        for note in sorted(notes, key=lambda n: n.path):
            lower = note.path.lower()
            self._by_path.setdefault(lower, note)
            self._by_base.setdefault(posixpath.basename(lower), []).append(note)
            stem = posixpath.splitext(posixpath.basename(note.path))[0]
            names = [(_MEMORY_ID, note.memory_id), (_PATH, note.path),
                     (_PATH, posixpath.splitext(note.path)[0]), (_STEM, stem),
                     (_TITLE, note.title), *((_ALIAS, a) for a in note.aliases)]
            for rank, name in names:
                if name and name.strip():
                    self._names.setdefault(name.strip().lower(), []).append((rank, note))

    def resolve(self, raw: str, origin: Note) -> tuple[Note | None, str]:
        """The note raw names, seen from origin, and how it was matched ('' if not found)."""
        target = clean_target(raw)
        if not target:
            return None, ""
        if "/" in target or posixpath.splitext(target)[1]:
            found = self._by_relative_path(target, origin)
            if found is not None:
                return found, "path"
        entries = self._names.get(target.strip().lower())
        if not entries:
            return None, ""
        best = min(rank for rank, _ in entries)
        note = _nearest([n for rank, n in entries if rank == best], origin)
        return note, _HOW[best]

    def _by_relative_path(self, target: str, origin: Note) -> Note | None:
        here = posixpath.dirname(origin.path)
        plain = target.lstrip("/")
        for candidate in (posixpath.normpath(posixpath.join(here, target)), plain):
            for suffix in ("", ".md"):
                note = self._by_path.get((candidate + suffix).lower())
                if note is not None:
                    return note
        for suffix in ("", ".md"):
            tail = (plain + suffix).lower()
            matches = [n for n in self._by_base.get(posixpath.basename(tail), [])
                       if n.path.lower() == tail or n.path.lower().endswith("/" + tail)]
            if matches:
                return _nearest(matches, origin)
        return None


def _nearest(notes: list[Note], origin: Note) -> Note:
    """Among equally good matches: same folder first, then shallowest, then by path."""
    here = posixpath.dirname(origin.path)
    return min(notes, key=lambda n: (posixpath.dirname(n.path) != here, n.path.count("/"), n.path))
