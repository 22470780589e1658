"""Raw records of conversations (the artifact store's truth): conversations, their messages,
and the rule that admits a batch of them whole or refuses it naming the first bad record."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from enum import Enum

from attrs import field, frozen

from memory.domain.errors import AiMemoryError, InvalidRequest
from memory.domain.secrets import redact_text

SCOPE_KEYS = ("repository", "project", "ticket")
MAX_SEQ = 2**63 - 1  # what a store's integer column holds
OPTIONAL_TEXT = ("session", "time", "speaker", "role", *SCOPE_KEYS)
# Private text is dropped at intake: the marker says something was there, never what.
PRIVATE_TAG = re.compile(r"(?i)<(/?)private\s*>")
PRIVATE_MARKER = "[PRIVATE:removed]"


class BatchRefused(InvalidRequest):
    """A batch of raw records broke a rule; nothing of it was stored."""

    def __init__(self, where: str, why: str):
        super().__init__(f"{where}: {why} (the whole batch was refused, nothing stored)")
        self.where = where
        self.why = why


class IngestRaced(AiMemoryError, RuntimeError):
    """Another ingest stored the same file between this one's read and its store."""


@frozen(kw_only=True)
class RawRecord:
    """One record as a reader found it: where (`file:line`, or an index) and its fields."""

    where: str
    fields: Mapping[str, object]


@frozen(kw_only=True)
class Conversation:
    source: str
    conversation: str
    repository: str | None = None
    project: str | None = None
    ticket: str | None = None

    def scope(self) -> dict[str, str | None]:
        return {key: getattr(self, key) for key in SCOPE_KEYS}


@frozen(kw_only=True)
class Message:
    """One message as stored: secrets already replaced by markers, private text removed."""

    source: str
    conversation: str
    seq: int
    text: str
    session: str | None = None
    time: str | None = None
    speaker: str | None = None
    role: str | None = None
    digest: str = field(init=False)

    @digest.default
    def _digest(self) -> str:
        return content_digest({"source": self.source, "conversation": self.conversation,
                               "seq": self.seq, "text": self.text, "session": self.session,
                               "time": self.time, "speaker": self.speaker, "role": self.role})

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.source, self.conversation, self.seq)


@frozen(kw_only=True)
class Batch:
    """A validated batch: its conversations, and its messages in the order given (a record
    repeated with the same content is kept once and counted in `repeated`)."""

    conversations: tuple[Conversation, ...]
    messages: tuple[Message, ...]
    positions: Mapping[tuple[str, str, int], str]  # message key -> where it was read
    repeated: int = 0


@frozen(kw_only=True)
class IngestedFile:
    """How much of one source file is stored: its first `size` bytes (`lines` lines), whose
    sha256 is `digest`; `revision` counts the times the file was found rewritten."""

    source: str
    path: str
    size: int
    lines: int
    digest: str
    revision: int = 0


@frozen(kw_only=True)
class FileRead:
    """What a reader read of one file from an offset: the records of its complete lines,
    where they end (`size`, `lines`), the sha256 of the file up to there, and a word about
    a last line left unread (incomplete: still being written)."""

    path: str
    records: tuple[RawRecord, ...]
    size: int
    lines: int
    digest: str
    left: str | None = None


class Change(Enum):
    NEW = "new"
    UNCHANGED = "unchanged"
    REVISED = "revised"


@frozen(kw_only=True)
class Stored:
    """What one stored batch changed."""

    new: int = 0
    unchanged: int = 0
    revised: int = 0


@frozen(kw_only=True)
class CheckReport:
    """The store's integrity: every record's digest recomputed from what is stored."""

    conversations: int
    records: int
    problems: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.problems


def check_extent(stored: IngestedFile | None, read_from: IngestedFile | None, path: str) -> None:
    """A batch is stored only over the extent it was read after; else IngestRaced."""
    if stored != read_from:
        raise IngestRaced(f"{path} was ingested by another process meanwhile")


def change_of(stored_digest: str | None, message: Message, revising: bool, where: str) -> Change:
    """A message against the one stored under its key: a rewritten file may revise it; any
    other batch that says something else under a stored key is refused, never duplicated."""
    if stored_digest is None:
        return Change.NEW
    if stored_digest == message.digest:
        return Change.UNCHANGED
    if revising:
        return Change.REVISED
    raise BatchRefused(where, f"seq {message.seq} of conversation {message.conversation!r} is "
                              f"already stored with different content")


def scope_change(stored: Conversation | None, conversation: Conversation, revising: bool,
                 where: str) -> Change:
    """The same rule for a conversation's scope."""
    if stored is None:
        return Change.NEW
    if stored == conversation:
        return Change.UNCHANGED
    if revising:
        return Change.REVISED
    raise BatchRefused(where, f"conversation {conversation.conversation!r} is stored "
                              f"{_scope_words(stored)}, not {_scope_words(conversation)}")


def content_digest(value: Mapping[str, object]) -> str:
    """sha256 of the canonical JSON of a record: the same content, the same digest."""
    canonical = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def clean_text(text: str) -> str:
    """What of a message may be stored: private parts removed, then secrets redacted."""
    return redact_text(without_private(text))


def without_private(text: str) -> str:
    """`text` with each outermost <private>...</private> replaced by the marker. Nested tags
    count (the inner closing tag ends nothing), an unclosed one runs to the end, and a stray
    closing tag is dropped: a mistake in the tags hides more, never less."""
    kept, depth, at = [], 0, 0
    for tag in PRIVATE_TAG.finditer(text):
        if depth == 0:
            kept.append(text[at:tag.start()])
        closing = tag.group(1) == "/"
        if not closing:
            if depth == 0:
                kept.append(PRIVATE_MARKER)
            depth += 1
        elif depth:
            depth -= 1
        at = tag.end()
    if depth == 0:
        kept.append(text[at:])
    return "".join(kept)


def validate_batch(source: str, records: Sequence[RawRecord]) -> Batch:
    """The batch as stored, or BatchRefused naming the first bad record and why."""
    conversations: dict[str, Conversation] = {}
    messages: dict[tuple[str, str, int], Message] = {}
    positions: dict[tuple[str, str, int], str] = {}
    repeated = 0
    for record in records:
        conversation, message = _parse(source, record)
        known = conversations.setdefault(conversation.conversation, conversation)
        if known != conversation:
            raise BatchRefused(record.where, f"conversation {conversation.conversation!r} is "
                               f"scoped {_scope_words(conversation)} here but "
                               f"{_scope_words(known)} at {_first_of(positions, known)}")
        held = messages.get(message.key)
        if held is not None:
            if held.digest != message.digest:
                raise BatchRefused(record.where, f"seq {message.seq} of conversation "
                                   f"{message.conversation!r} repeats {positions[message.key]} "
                                   f"with different content")
            repeated += 1
            continue
        messages[message.key] = message
        positions[message.key] = record.where
    return Batch(conversations=tuple(conversations.values()), messages=tuple(messages.values()),
                 positions=positions, repeated=repeated)


def _parse(source: str, record: RawRecord) -> tuple[Conversation, Message]:
    fields = record.fields
    for name in ("conversation", "seq", "text"):
        if fields.get(name) is None:
            raise BatchRefused(record.where, f"missing `{name}`")
    conversation = _identifier(record, "conversation")
    seq = fields["seq"]
    if not isinstance(seq, int) or isinstance(seq, bool) or not 0 <= seq <= MAX_SEQ:
        raise BatchRefused(record.where, f"`seq` must be a whole number >= 0, not {seq!r:.40}")
    if not isinstance(fields["text"], str):
        raise BatchRefused(record.where, "`text` must be a string")
    optional = {name: _optional_text(record, name) for name in OPTIONAL_TEXT}
    _check_time(record, optional["time"])
    scope = {key: optional.pop(key) for key in SCOPE_KEYS}
    return (Conversation(source=source, conversation=conversation, **scope),
            Message(source=source, conversation=conversation, seq=seq,
                    text=clean_text(fields["text"]), **optional))


def _identifier(record: RawRecord, name: str) -> str:
    value = record.fields[name]
    if not isinstance(value, str) or not value.strip():
        raise BatchRefused(record.where, f"`{name}` must be a non-empty string")
    if clean_text(value) != value:  # an id is a key: it cannot be stored with a marker in it
        raise BatchRefused(record.where, f"`{name}` holds a secret or private text")
    return value.strip()


def _optional_text(record: RawRecord, name: str) -> str | None:
    value = record.fields.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise BatchRefused(record.where, f"`{name}` must be a string")
    return clean_text(value.strip()) or None


def _check_time(record: RawRecord, value: str | None) -> None:
    if value is None:
        return
    try:
        when = datetime.fromisoformat(value)
    except ValueError:
        when = None
    if when is None or when.tzinfo is None:
        raise BatchRefused(record.where, f"`time` {value!r:.60} is not ISO-8601 with an offset "
                                         f"(e.g. 2023-05-08T13:56:00+00:00)")


def _scope_words(conversation: Conversation) -> str:
    keys = {k: v for k, v in conversation.scope().items() if v}
    return ", ".join(f"{k} {v}" for k, v in keys.items()) or "without scope"


def _first_of(positions: Mapping[tuple[str, str, int], str], conversation: Conversation) -> str:
    return next((where for key, where in positions.items() if key[1] == conversation.conversation),
                "an earlier record")

