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
        named: dict[str, list[tuple[int, Note]]] = {}
        by_base: dict[str, list[Note]] = {}
        self._by_path: dict[str, Note] = {}
        for note in sorted(notes, key=lambda n: n.path):
            lower = note.path.lower()
            self._by_path.setdefault(lower, note)
            by_base.setdefault(posixpath.basename(lower), []).append(note)
            stem = posixpath.splitext(posixpath.basename(note.path))[0]
            names = [(_MEMORY_ID, note.memory_id), (_PATH, note.path),
                     (_PATH, posixpath.splitext(note.path)[0]), (_STEM, stem),
                     (_TITLE, note.title), *((_ALIAS, a) for a in note.aliases)]
            for rank, name in names:
                if name and name.strip():
                    named.setdefault(name.strip().lower(), []).append((rank, note))
        # A name many notes share (README, index, a common title) is resolved for every
        # link to it: each lookup must not walk all of them (50k notes took > 20 min).
        self._names = {name: _best_ranked(entries) for name, entries in named.items()}
        self._by_base = {base: _Nearest(found) for base, found in by_base.items()}

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
        entry = self._names.get(target.strip().lower())
        if entry is None:
            return None, ""
        best, notes = entry
        return notes.nearest(origin), _HOW[best]

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
            same_base = self._by_base.get(posixpath.basename(tail))
            if same_base is None:
                continue
            if "/" not in tail:  # every note of that file name ends with the tail
                return same_base.nearest(origin)
            matches = [n for n in same_base.notes
                       if n.path.lower() == tail or n.path.lower().endswith("/" + tail)]
            if matches:
                return _Nearest(matches).nearest(origin)
        return None


def _best_ranked(entries: list[tuple[int, Note]]) -> tuple[int, _Nearest]:
    best = min(rank for rank, _ in entries)
    return best, _Nearest([note for rank, note in entries if rank == best])


class _Nearest:
    """Notes equally good for one name; the one nearest a linking note, in constant time.

    Nearest: in the linking note's folder first, then the shallowest, then by path.
    """

    def __init__(self, notes: Sequence[Note]):
        self.notes = tuple(notes)
        self._in_folder: dict[str, Note] = {}
        for note in sorted(self.notes, key=lambda n: n.path):
            self._in_folder.setdefault(posixpath.dirname(note.path), note)
        self._shallowest = min(self.notes, key=lambda n: (n.path.count("/"), n.path))

    def nearest(self, origin: Note) -> Note:
        return self._in_folder.get(posixpath.dirname(origin.path), self._shallowest)
