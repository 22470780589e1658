"""Typed reads of a note's front matter (plain data already loaded), each refusal a warning."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from memory.domain.note_scope import NoteScope, declared_scope
from memory.domain.notes import Status
from memory.domain.secrets import REDACTED_MARKER

WIKI_VALUE = re.compile(r"^\[\[([^\[\]]+)\]\]$")
# Plain strings in these fields often list several values: `tags: a, b`.
COMMA_LISTS = frozenset({"tags", "related_repos", "related_projects"})


def scalar_text(value: object) -> str | None:
    """A scalar front matter value as text; None for anything else or empty."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (str, int, float)):
        return str(value).strip() or None
    return None


def _unwiki(value: str) -> str:
    m = WIKI_VALUE.match(value)
    return m.group(1).split("|", 1)[0].split("#", 1)[0].strip() if m else value


class FrontMatterFields:
    """Reads one note's front matter; every value it has to ignore leaves a warning."""

    def __init__(self, data: Mapping[str, Any], path: str):
        self.data, self._path = data, path
        self.warnings: list[str] = []

    def warn(self, key: str, reason: str) -> None:
        self.warnings.append(f"{self._path}: {key} ignored: {reason}")

    def text(self, key: str) -> str | None:
        value = self.data.get(key)
        text = scalar_text(value)
        if text is None and value is not None and not isinstance(value, str):
            self.warn(key, f"expected text, got {type(value).__name__}")
        return text

    def values(self, key: str) -> tuple[str, ...]:
        """A list of names (or one name, or a comma list); secret-shaped ones are dropped:
        names become ways to find the note and graph nodes."""
        value = self.data.get(key)
        items = value if isinstance(value, list) else [] if value is None else [value]
        out: list[str] = []
        for item in items:
            # Unquoted `[[Note]]` in YAML is a list inside a list: read it as the wikilink.
            for leaf in item if isinstance(item, list) else [item]:
                if isinstance(leaf, (dict, list)):
                    self.warn(key, f"nested {type(leaf).__name__} value")
                    continue
                text = scalar_text(leaf) or ""
                parts = text.split(",") if key in COMMA_LISTS else [text]
                out.extend(_unwiki(p.strip().lstrip("#") if key == "tags" else p.strip())
                           for p in parts)
        if any(REDACTED_MARKER.search(v) for v in out):
            self.warn(key, "a value that looks like a secret")
        return tuple(dict.fromkeys(v for v in out if v and not REDACTED_MARKER.search(v)))

    def status(self) -> Status:
        raw = self.text("status")
        status = Status.parse(raw)
        if raw and status.value != raw.lower().replace("_", "-"):
            self.warn("status", f"unknown value {raw!r}, read as active")
        return status

    def scope(self, folder: NoteScope) -> NoteScope:
        """`primary_scope: {kind, id}` wins over the folder; the id may be left to it."""
        declared = self.data.get("primary_scope")
        if declared is None:
            return folder
        if not isinstance(declared, Mapping):
            self.warn("primary_scope", "expected a mapping with kind and id")
            return folder
        scope, problem = declared_scope(str(declared.get("kind") or ""),
                                        scalar_text(declared.get("id")), folder)
        if problem:
            self.warn("primary_scope", problem)
        return scope
