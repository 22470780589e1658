"""The scope rule as conditions over a note's keys: the domain evaluates them, and each SQL
store renders the same conditions into its dialect, so no store writes the rule again."""

from __future__ import annotations

from typing import Literal

from attrs import frozen

from memory.domain.note_keys import NoteKeys
from memory.domain.notes import Status


@frozen(kw_only=True)
class KeyIs:
    """The note's key equals the value."""

    key: Literal["root", "ticket"]
    value: str

    def holds(self, keys: NoteKeys) -> bool:
        return bool(getattr(keys, self.key) == self.value)


@frozen(kw_only=True)
class OwnedBy:
    """The note belongs to the owner, or to no owner at all (a cross-cutting note)."""

    key: Literal["repositories", "projects"]
    value: str

    def holds(self, keys: NoteKeys) -> bool:
        return keys.cross_cutting or self.value in getattr(keys, self.key)


@frozen(kw_only=True)
class PathUnder:
    """The note's path key starts with the prefix (a folder key ending in `/`)."""

    prefix: str

    def holds(self, keys: NoteKeys) -> bool:
        return keys.path.startswith(self.prefix)


@frozen(kw_only=True)
class StatusIn:
    """The note's effective status is one of these."""

    statuses: tuple[Status, ...]

    def holds(self, keys: NoteKeys) -> bool:
        return keys.status in self.statuses


Condition = KeyIs | OwnedBy | PathUnder | StatusIn
