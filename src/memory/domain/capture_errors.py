"""Errors of writing and editing notes, with what a caller needs to recover from each."""

from __future__ import annotations

from collections.abc import Sequence

from attrs import frozen

from memory.domain.errors import AiMemoryError, InvalidRequest
from memory.domain.messages import Action, Message
from memory.domain.secrets import SecretFinding


@frozen(kw_only=True)
class DuplicateCandidate:
    """A note that may already hold the knowledge a write brings, and why it looks so."""

    memory_id: str
    path: str
    title: str
    reason: str  # "same title in this scope", "similar text (...)"


class EditConflict(AiMemoryError):
    """The note changed since the caller read it: nothing was written."""

    def __init__(self, *, path: str, current_hash: str, given_hash: str | None = None):
        """given_hash: set when only the caller's own earlier edits changed it since then."""
        self.path, self.current_hash, self.own = path, current_hash, given_hash is not None
        if given_hash is not None:
            super().__init__(f"{path}: content_hash {given_hash} is from before your own "
                             f"earlier edit, which changed it; the current hash is "
                             f"{current_hash} (that edit returned it): redo the edit with it, "
                             "checking line numbers your edit moved")
        else:
            super().__init__(f"{path} changed since it was read (someone else edited it); its "
                             f"content_hash is now {current_hash}: read it again and redo "
                             "the edit")


class NoteAlreadyExists(InvalidRequest):
    """A write would overwrite a file: notes are never replaced by a write."""

    def __init__(self, path: str):
        self.path = path
        super().__init__(Message(f"a file already exists at {path}: edit that note (",
                                 Action.EDIT, ") or choose another title or path"))


class DuplicateKnowledge(InvalidRequest):
    """The scope already holds a note on the subject; allow_duplicate writes anyway."""

    def __init__(self, candidates: Sequence[DuplicateCandidate]):
        self.candidates = tuple(candidates)
        listed = "; ".join(f"{c.path} ({c.title!r}: {c.reason})" for c in self.candidates)
        super().__init__(Message(f"this scope may already hold this knowledge: {listed}. Edit "
                                 "that note instead, or write with ", Action.ALLOW_DUPLICATE))


class SecretInNote(InvalidRequest):
    """The text holds secret-shaped values; the message names lines and kinds, never values."""

    def __init__(self, findings: Sequence[SecretFinding]):
        self.findings = tuple(findings)
        where = ", ".join(f"line {f.line} ({f.kind})" for f in self.findings)
        super().__init__(f"refused: the note would hold secret-shaped text at {where}. Write "
                         "where the secret lives (vault path, variable name), not its value")


class WriteBusy(AiMemoryError, RuntimeError):
    """Another writer held the memory root's write lock for longer than we agreed to wait."""


class SupersedeIncomplete(AiMemoryError):
    """The new note was written, but the note it supersedes could not be marked."""

    def __init__(self, *, path: str, memory_id: str, content_hash: str, old: str,
                 reason: str):
        self.path, self.memory_id, self.content_hash = path, memory_id, content_hash
        self.old, self.reason = old, reason
        super().__init__(Message(f"the new note was written at {path} (memory_id {memory_id}, "
                                 f"content_hash {content_hash}), but {old} was not marked "
                                 f"superseded: {reason}. Mark it with ", Action.EDIT,
                                 " operation supersede"))
