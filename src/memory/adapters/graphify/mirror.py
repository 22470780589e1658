"""What Graphify reads: each note's parsed body, written into a private folder of the build.

Graphify reads files from disk; handing it the notes themselves would let it see what the
index never keeps: secret values (the parsed lines have them replaced), front matter it
would parse with its own YAML loader (aliases, deep nesting) and copy onto graph nodes,
names that are not text. The mirror holds the parsed lines under the note paths (printable
by construction), front matter blanked so every line keeps its number.
"""

from __future__ import annotations

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


def write_mirror(folder: Path, documents: Sequence[NoteDocument]) -> tuple[list[Path], list[str]]:
    """Write every note Graphify can read under folder; (files written, paths left out)."""
    written, left_out = [], []
    for doc in documents:
        path = doc.note.path
        if not path.lower().endswith(GRAPHIFY_SUFFIXES):
            continue
        target = folder.joinpath(*path.split("/"))
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            with open(target, "x", encoding="utf-8", newline="\n") as handle:
                handle.write(mirror_text(doc))
        except (OSError, ValueError):  # a name or path too long here, a case-folding disk
            left_out.append(path)
            continue
        written.append(target)
    return sorted(written), left_out


def mirror_folder(output: Path) -> Path:
    """Where the build behind an output graph file keeps its mirror."""
    return Path(os.fspath(output)).parent / "mirror"
