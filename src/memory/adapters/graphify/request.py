"""The request a graph build hands its child process: the root, the notes, where to write."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import cattrs

from memory.domain.notes import Note, NoteDocument

_converter = cattrs.Converter()
DEFAULT_MEMORY_MB = 4096  # a build's address space unless AI_MEMORY_GRAPH_MEMORY_MB says


def encode_request(root: Path, documents: Sequence[NoteDocument], cache_dir: Path,
                   output: Path, *, parent_pid: int,
                   memory_mb: int = DEFAULT_MEMORY_MB) -> dict:
    """The JSON request a build hands its child: the root, the notes, where to write, the
    refresh it ends with (`parent_pid`) and its memory cap (0: none)."""
    return {"root": str(root), "cache_dir": str(cache_dir), "output": str(output),
            "parent_pid": parent_pid, "memory_mb": memory_mb,
            "documents": [{"note": _converter.unstructure(d.note), "lines": list(_lines_of(d))}
                          for d in documents]}


def _lines_of(doc: NoteDocument) -> tuple[str, ...]:
    """The file's lines; rebuilt from the chunks (blank elsewhere) when none were kept."""
    if doc.lines or not doc.chunks:
        return tuple(doc.lines)
    lines = [""] * max(c.end_line for c in doc.chunks)
    for chunk in doc.chunks:
        span = chunk.text.split("\n")[: chunk.end_line - chunk.start_line + 1]
        for offset, text in enumerate(span):
            lines[chunk.start_line - 1 + offset] = text
    return tuple(lines)


def decode_documents(request: dict) -> list[NoteDocument]:
    """The notes of a request, as the child process needs them (lines, no chunks)."""
    return [NoteDocument(note=_converter.structure(d["note"], Note), chunks=(),
                         lines=tuple(d["lines"])) for d in request["documents"]]
