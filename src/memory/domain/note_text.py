"""A note file's text as lines with their own endings, so an edit keeps every other byte."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence

from attrs import field, frozen

from memory.domain.capture_errors import EditConflict
from memory.domain.errors import InvalidRequest

BOM = "\ufeff"


MIN_KEY_BYTES = 32


def _long_enough(_: object, __: object, secret: bytes) -> None:
    if len(secret) < MIN_KEY_BYTES:
        raise ValueError(f"a content key needs at least {MIN_KEY_BYTES} bytes")


@frozen
class ContentKey:
    """The secret a note's content_hash is keyed with: HMAC-SHA256 of the file's bytes.

    A plain sha256 of the file would let anyone who reads the hash next to the redacted
    text test guesses of the redacted value offline; keyed, the hash still changes with
    every byte of the file but answers no guess without the key, which never leaves the
    server side (the state folder, or the shared store's database).
    """

    secret: bytes = field(repr=False, validator=_long_enough)

    def hash(self, data: bytes) -> str:
        """A note's content_hash (what memory_get returns and memory_edit checks), hex."""
        return hmac.new(self.secret, data, hashlib.sha256).hexdigest()

    @property
    def fingerprint(self) -> str:
        """Which key this is, shown without giving anything away (its MAC of a constant):
        an index whose hashes were made with another key (or none) is rebuilt once."""
        return self.hash(b"ai-memory content key")[:12]


def check_hash(path: str, expected: str, current: str) -> None:
    """The conflict rule: an edit applies only to the version its caller read."""
    if expected != current:
        raise EditConflict(path=path, current_hash=current)


@frozen(kw_only=True)
class NoteFile:
    """One note file's bytes as they are (or were just written) on disk."""

    path: str
    data: bytes
    content_hash: str

    @classmethod
    def of(cls, path: str, data: bytes, key: ContentKey) -> NoteFile:
        return cls(path=path, data=data, content_hash=key.hash(data))


def _physical(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Lines as `split_lines` numbers them (split on LF only), and the ending each one had."""
    pieces = text.split("\n")
    lines, endings = [], []
    for i, piece in enumerate(pieces):
        last = i == len(pieces) - 1
        if last and not piece:
            break
        ending = "" if last else "\n"
        if piece.endswith("\r"):  # split_lines drops a CR before the LF (and at the very end)
            piece, ending = piece[:-1], "\r" + ending
        lines.append(piece)
        endings.append(ending)
    return tuple(lines), tuple(endings)


@frozen(kw_only=True)
class NoteText:
    """Decoded note text: a UTF-8 BOM flag, the lines and the ending each line had."""

    bom: bool = False
    lines: tuple[str, ...] = ()
    endings: tuple[str, ...] = ()

    @classmethod
    def decode(cls, data: bytes, path: str) -> NoteText:
        if b"\x00" in data:
            raise InvalidRequest(f"{path}: binary file (NUL bytes), not a Markdown note")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise InvalidRequest(f"{path}: not valid UTF-8 (byte {e.start}); edit it by hand") \
                from None
        return cls.of(text)

    @classmethod
    def of(cls, text: str) -> NoteText:
        bom = text.startswith(BOM)
        lines, endings = _physical(text[1:] if bom else text)
        return cls(bom=bom, lines=lines, endings=endings)

    def encode(self) -> bytes:
        body = "".join(line + end for line, end in zip(self.lines, self.endings))
        return ((BOM if self.bom else "") + body).encode("utf-8")

    @property
    def newline(self) -> str:
        """The ending most lines use; new lines get it too."""
        crlf = self.endings.count("\r\n")
        return "\r\n" if crlf and crlf >= self.endings.count("\n") else "\n"

    def replaced(self, start: int, end: int, new: Sequence[str]) -> NoteText:
        """Lines [start, end) (0-based) replaced by `new`; every other line kept as it was.

        New lines end like the file's lines; a file without a final line break keeps none.
        """
        if not 0 <= start <= end <= len(self.lines):
            raise InvalidRequest(f"lines {start + 1}-{end} are outside the note "
                                 f"({len(self.lines)} lines)")
        bare_end = bool(self.endings) and self.endings[-1] == ""
        pairs = [*zip(self.lines[:start], self.endings[:start]),
                 *((line, self.newline) for line in new),
                 *zip(self.lines[end:], self.endings[end:])]
        fixed = [(line, ending or self.newline) for line, ending in pairs[:-1]]
        if pairs:
            line, ending = pairs[-1]
            fixed.append((line, "" if bare_end else ending or self.newline))
        return NoteText(bom=self.bom, lines=tuple(p[0] for p in fixed),
                        endings=tuple(p[1] for p in fixed))


def _text(value: object, field: str) -> str:
    if not isinstance(value, str):
        raise InvalidRequest(f"{field} must be a string")
    if "\x00" in value:
        raise InvalidRequest(f"{field} must not contain NUL characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidRequest(f"{field} is not valid Unicode text (lone surrogate)") from None
    return value


def single_line(value: object, field: str, max_chars: int) -> str:
    """One line of text, trimmed: a title, a tag, a heading."""
    text = _text(value, field).strip()
    if any(c in text for c in "\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"):
        raise InvalidRequest(f"{field} must be a single line")
    if not text:
        raise InvalidRequest(f"{field} must not be empty")
    if len(text) > max_chars:
        raise InvalidRequest(f"{field} is too long ({len(text)} characters, at most {max_chars})")
    return text


def text_lines(value: object, field: str, max_bytes: int) -> tuple[str, ...]:
    """Multi-line Markdown as lines (CRLF or LF); one final line break is not a line."""
    text = _text(value, field)
    size = len(text.encode("utf-8"))
    if size > max_bytes:
        raise InvalidRequest(f"{field} is {size} bytes, over the {max_bytes // 1024} KB limit")
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return tuple(lines[:-1] if len(lines) > 1 and lines[-1] == "" else lines)
