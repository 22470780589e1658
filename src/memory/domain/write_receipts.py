"""Which hash an edit applies to, and, when it is stale, whose change came in between.

A write or an edit returns the note's new content_hash and leaves a receipt: the hash it
replaced, the hash it made, and who asked. A conflict walks the receipts back from the
note's current hash: if every change since the caller's hash was the caller's own, it says
so (an agent that reused its first hash), instead of blaming someone else.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from attrs import frozen

from memory.domain.capture_errors import EditConflict
from memory.domain.errors import InvalidRequest
from memory.domain.messages import Action, Message
from memory.domain.new_note import Author

FULL_HASH_CHARS = 64
MIN_PREFIX_CHARS = 12  # what `ai-memory get` prints; 48 bits, never ambiguous for one note
MAX_STEPS = 20  # receipts walked back before a conflict is called someone else's
_HEX = re.compile(rf"[0-9a-f]{{{MIN_PREFIX_CHARS},{FULL_HASH_CHARS}}}")


def hash_prefix(value: str) -> str:
    """A content_hash as a caller gives it: the full 64 hex characters or a prefix of 12+."""
    digest = value.strip().lower()
    if _HEX.fullmatch(digest):
        return digest
    if not re.fullmatch(r"[0-9a-f]*", digest):
        wrong = "holds characters other than hex digits 0-9 a-f"
    elif len(digest) < MIN_PREFIX_CHARS:
        wrong = f"is only {len(digest)} characters, too short to name one version"
    else:
        wrong = f"is {len(digest)} characters, longer than a hash"
    raise InvalidRequest(  # the value itself is not echoed: it may be anything a caller pasted
        Message(f"content_hash {wrong}: give the hash ", Action.GET, " shows for the note, its "
                f"first {MIN_PREFIX_CHARS} or more hex characters or all {FULL_HASH_CHARS}"))


def same_version(given: str, content_hash: str) -> bool:
    """True when `given` (a full hash or a prefix) names this content_hash."""
    return content_hash.startswith(given)


@frozen(kw_only=True)
class WriteReceipt:
    """What one write or edit returned: the hash it replaced (None: a new note), the hash it
    made, and who asked."""

    path: str
    base_hash: str | None
    content_hash: str
    author: str
    source: str

    @classmethod
    def of(cls, *, path: str, base_hash: str | None, content_hash: str,
           author: Author) -> WriteReceipt:
        return cls(path=path, base_hash=base_hash, content_hash=content_hash,
                   author=author.name, source=author.source)

    def by(self, author: Author) -> bool:
        return (self.author, self.source) == (author.name, author.source)


def edit_base(path: str, given: str, current: str, author: Author,
              made: Callable[[str], WriteReceipt | None]) -> str:
    """The full hash an edit applies to when `given` names the current version; otherwise
    EditConflict, saying whether only the caller's own earlier edits changed the note since.

    `made(h)` is the newest receipt that returned hash h, if one is kept.
    """
    if same_version(given, current):
        return current
    raise EditConflict(path=path, current_hash=current,
                       given_hash=given if _only_own(given, current, author, made) else None)


def _only_own(given: str, current: str, author: Author,
              made: Callable[[str], WriteReceipt | None]) -> bool:
    version = current
    for _ in range(MAX_STEPS):
        receipt = made(version)
        if receipt is None or not receipt.by(author) or receipt.base_hash is None:
            return False
        if same_version(given, receipt.base_hash):
            return True
        version = receipt.base_hash
    return False
