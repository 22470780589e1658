"""What Graphify reads: each note's parsed body, kept in a mirror folder of the state dir.

Graphify reads files from disk; handing it the notes themselves would let it see what the
index never keeps: secret values (the parsed lines have them replaced), front matter it
would parse with its own YAML loader (aliases, deep nesting) and copy onto graph nodes,
names that are not text. The mirror holds the parsed lines under the note paths (printable
by construction), front matter blanked so every line keeps its number. It is brought up to
date by each build, so a note that did not change costs a read, not a write. A symbolic
link found in the mirror (only the build writes there; one can arrive with a checkout that
tracks the state folder) is removed, never followed: the mirror is written nowhere else.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Sequence
from pathlib import Path

from memory.domain.markdown import front_matter_lines
from memory.domain.notes import NoteDocument

GRAPHIFY_SUFFIXES = (".md", ".mdx", ".qmd")


def mirror_text(doc: NoteDocument) -> str:
    """The note's lines as Graphify may read them: front matter lines left blank."""
    _, body_start = front_matter_lines(doc.lines)
    lines = [""] * (body_start - 1) + list(doc.lines[body_start - 1:])
    return "\n".join(lines) + "\n"


NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def _same(target: str, text: str) -> bool:
    try:
        fd = os.open(target, os.O_RDONLY | NOFOLLOW)
        with open(fd, encoding="utf-8", newline="") as handle:
            return handle.read(len(text) + 1) == text
    except (OSError, ValueError):
        return False


def _folders(folder: Path, parent: str) -> None:
    """Every folder from the mirror down to parent made, none of them a link."""
    current = str(folder)
    for name in Path(os.path.relpath(parent, folder)).parts:
        current = os.path.join(current, name)
        if os.path.islink(current):
            os.unlink(current)
        try:
            os.mkdir(current)
        except FileExistsError:
            pass


def _write(folder: Path, target: str, text: str, made: set[str]) -> None:
    parent = os.path.dirname(target)
    if parent not in made:
        os.makedirs(folder, exist_ok=True)
        _folders(folder, parent)
        made.add(parent)
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | NOFOLLOW
    try:
        fd = os.open(target, flags, 0o644)
    except OSError as e:
        if e.errno != errno.ELOOP:
            raise
        os.unlink(target)  # a link where a mirror file belongs: replaced, not followed
        fd = os.open(target, flags | os.O_EXCL, 0o644)
    with open(fd, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(text)


def update_mirror(folder: Path, documents: Sequence[NoteDocument]) -> tuple[list[Path], list[str]]:
    """Make folder hold exactly the notes Graphify can read; (their files, paths left out).

    A path this disk cannot hold (too long, a folder of that name) is left out: its note
    still gets a page of its own.
    """
    kept, left_out, made = {}, [], set()
    for doc in documents:
        path = doc.note.path
        if not path.lower().endswith(GRAPHIFY_SUFFIXES):
            continue
        target = os.path.join(folder, *path.split("/"))
        text = mirror_text(doc)
        try:
            if not _same(target, text):
                _write(folder, target, text, made)
        except (OSError, ValueError):
            left_out.append(path)
            continue
        kept[target] = path
    _remove_others(folder, kept)
    return sorted(Path(t) for t in kept), left_out


def _remove_others(folder: Path, kept: dict[str, str]) -> None:
    """Files of notes that are gone, and folders left empty, leave the mirror."""
    for top, dirs, files in os.walk(folder, topdown=False):
        for name in files:
            path = os.path.join(top, name)
            if path not in kept:
                os.unlink(path)
        for name in dirs:
            path = os.path.join(top, name)
            try:
                os.unlink(path) if os.path.islink(path) else os.rmdir(path)
            except OSError:
                pass  # not empty
