"""Resolving a name written in a note (wikilink, path, memory_id, title, alias) to a note."""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from urllib.parse import unquote

from memory.domain.markdown import link_target
from memory.domain.notes import Note

# Lower wins: an exact memory_id beats a path, which beats a file stem, a title, an alias.
_MEMORY_ID, _PATH, _STEM, _TITLE, _ALIAS = range(5)
_HOW = ("memory_id", "path", "stem", "title", "alias")


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
        """The note raw names, seen from origin, and how it was matched ('' if not found).

        A name written as a URL-escaped path (`Retry%20Policy.md`) is tried as written,
        then unescaped.
        """
        target = link_target(raw)
        if not target:
            return None, ""
        found = self._resolve(target, origin)
        if found[0] is None and "%" in target:
            found = self._resolve(unquote(target), origin)
        return found

    def _resolve(self, target: str, origin: Note) -> tuple[Note | None, str]:
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
