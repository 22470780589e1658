"""Plain-text renderings of a write and an edit: what the model needs for the next call."""

from __future__ import annotations

from memory.application.capture.requests import EditResult, WriteResult
from memory.entrypoints.presenters import warning_lines
from memory.entrypoints.text_safety import shown


def _indexed(indexed: bool) -> str:
    return "indexed: yes (memory_search finds it now)" if indexed else \
        "indexed: NO (written; a later search indexes it, see the warnings)"


def _note_lines(verb: str, path: str, memory_id: str | None, content_hash: str,
                indexed: bool, commit: str | None) -> list[str]:
    named = f" (memory_id {shown(memory_id)})" if memory_id else ""
    out = [f"{verb}: {shown(path)}{named}", f"content_hash: {content_hash}", _indexed(indexed)]
    if commit:
        out.append(f"commit: {commit}")
    return out


def write_text(result: WriteResult) -> str:
    out = _note_lines("written", result.path, result.memory_id, result.content_hash,
                      result.indexed, result.commit)
    old = result.superseded
    if old is not None:
        out.append(f"superseded: {shown(old.path)} (content_hash {old.content_hash}, "
                   f"{'indexed' if old.indexed else 'NOT indexed'})")
    out += warning_lines(result.warnings)
    if result.items:
        out.append("evidence:")
        out += [f"{n}. {shown(item.citation)}  {shown(item.heading or item.title)}"
                for n, item in enumerate(result.items, 1)]
    return "\n".join(out)


def edit_text(result: EditResult) -> str:
    verb = "edited" if result.changed else "unchanged (the edit left the note as it was)"
    out = _note_lines(verb, result.path, result.memory_id, result.content_hash,
                      result.indexed, result.commit)
    return "\n".join(out + warning_lines(result.warnings))
