"""Which files of the memory root are notes: one rule for the scan, a read and the graph.

A note is a `.md` file inside the root, outside every hidden folder (`.git`, `.obsidian`,
the default state folder `.ai-memory`) and outside the state folder wherever it is
configured. A symbolic link is judged by where it finally points, wherever the link
itself sits: a link named `notes.md` that points at `.git/config`, at a file of the state
folder or into a hidden folder is not a note, so it is never indexed or served.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from memory.adapters.markdown.atomic_files import walked
from memory.domain.notes import is_markdown


def _inside(folder: str, path: str) -> bool:
    try:
        return os.path.commonpath([folder, path]) == folder
    except ValueError:  # another drive on Windows
        return False


class NotePlaces:
    """The rule over one root (a real path) and the folders ai-memory keeps state in."""

    def __init__(self, root: str, excluded: Sequence[str | os.PathLike[str]] = ()):
        self.root = root
        real = (os.path.realpath(os.fspath(p)) for p in excluded)
        # A state folder that holds the root itself (a test's tmp folder) excludes nothing
        # in it; one outside the root is already outside.
        self._excluded = tuple(p for p in real if not _inside(p, root))

    def inside(self, real: str) -> bool:
        return _inside(self.root, real)

    def excluded(self, real: str) -> bool:
        """Whether real (a folder or file) lies in a folder ai-memory keeps its state in."""
        return any(_inside(folder, real) for folder in self._excluded)

    def refusal(self, real: str) -> str | None:
        """Why the file at `real` (fully resolved) is no note, or None when it is one."""
        if not self.inside(real):
            return "points outside the memory root"
        if self.excluded(real):
            return "points into the folder ai-memory keeps its state in"
        names = Path(os.path.relpath(real, self.root)).parts
        if any(name.startswith(".") for name in names):
            return "points into a hidden folder or at a hidden file"
        if not names or not is_markdown(names[-1]):
            return "points at a file that is not a Markdown note"
        return None

    def read(self, real: str, limit: int) -> tuple[bytes, os.stat_result]:
        """Up to `limit` bytes of the note at real (refusal(real) is None), opened name by
        name from the root without following a link: a name swapped for a link after the
        check raises LinkOnTheWay instead of reading where the link points."""
        names = Path(os.path.relpath(real, self.root)).parts
        with walked(Path(self.root), names[:-1]) as (folder, _):
            return folder.read(names[-1], limit)
