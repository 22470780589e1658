"""Text as a reader sees it: compatibility forms folded (NFKC), invisible characters left out,
Markdown emphasis and wrapped lines seen through. Each character keeps the index it came from,
so what is found in the seen text is hidden in the original, and nothing else is."""

from __future__ import annotations

import enum
import re
import unicodedata
from array import array
from collections.abc import Iterator, Sequence

from attrs import frozen

# Format characters (Unicode category Cf: zero-width space, joiners, word joiner, soft hyphen,
# BOM, bidirectional controls, tags) and other characters that show nothing: the combining
# grapheme joiner, variation selectors, Hangul fillers.
INVISIBLE = re.compile(
    "[\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160\u17b4\u17b5"
    "\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0"
    "\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0000-\U000e0fff]")
NOT_ASCII = re.compile(r"[^\x00-\x7f]+")
# Emphasis (`**ghp_**abc`, `~~AKIA~~...`, `pass**word**:`) and code marks (`` `ghp_`abc ``)
# inside a word: at a word's edge they already end it, and taken away there they would let a
# value run on (`Bearer`) stays` is no token). Then an underscore only where it cannot be part
# of a name (`_password_` at a word's edge goes, `ghp_` and `DB_PASSWORD` keep theirs).
# Labels are read with code marks kept.
TOKEN_CHARS = r"A-Za-z0-9_\-+/="
# Each pattern opens with the character it removes: a regex that opens with a lookbehind is
# tried at every position of a line.
INSIDE_WORD = r"[{0}](?<=[{1}][{0}])[{0}]*+(?=[{1}])"
EMPHASIS = re.compile(INSIDE_WORD.format("*~", TOKEN_CHARS))
MARKS = re.compile(INSIDE_WORD.format("*~`", TOKEN_CHARS))
# A run of two or more, or one at a word's edge; `(?<!__)` starts it where the run starts.
EDGE_UNDERSCORES = re.compile(r"_(?<!__)(?:_++|(?<![A-Za-z0-9]_)|(?![A-Za-z0-9]))")
UNDERSCORES = re.compile(r"_+")  # `_AKIA_IOSF...`: emphasis inside a word, a name broken
MARKED = re.compile(r"[*~`_]")
# A value wrapped onto the next line: a break between two characters a token may hold.
WRAP = re.compile(rf"(?<=[{TOKEN_CHARS}])[ \t]*\n[ \t]*(?=[{TOKEN_CHARS}])")
WRAPPING = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+/=")


def wraps(line: str, next_line: str) -> bool:
    """Whether a value may run on from `line` to `next_line`: the break between them falls
    between two characters a token may hold (as `WRAP` joins them)."""
    return line.rstrip(" \t")[-1:] in WRAPPING and next_line.lstrip(" \t")[:1] in WRAPPING


class Reading(enum.IntEnum):
    """What a view of a text may be judged for: the more it differs from what was written,
    the less of the secret rules still hold in it."""

    FORMS = 0  # only shapes known by their form: names are broken (no underscore left)
    SHAPES = 1  # every shape, placeholders judged
    LABELS = 2  # shapes and labelled values (`password: x`)


@frozen
class SeenText:
    """`text` as read, and for each of its characters the index in the source it came from
    (increasing: characters are only folded or left out, never moved)."""

    text: str
    origin: Sequence[int]

    @classmethod
    def of(cls, source: str) -> SeenText:
        if source.isascii():  # nothing to fold or hide: most lines
            return cls(source, range(len(source)))
        parts, origin, at = [], array("l"), 0
        for run in NOT_ASCII.finditer(source):
            parts.append(source[at:run.start()])
            origin.extend(range(at, run.start()))
            _fold(run, parts, origin)
            at = run.end()
        parts.append(source[at:])
        origin.extend(range(at, len(source)))
        return cls("".join(parts), origin)

    def without(self, pattern: re.Pattern[str]) -> SeenText:
        """The text with every match of `pattern` left out."""
        cuts = [found.span() for found in pattern.finditer(self.text)]
        if not cuts:
            return self
        parts, origin, at = [], array("l"), 0
        for start, end in cuts:
            parts.append(self.text[at:start])
            origin.extend(self.origin[at:start])
            at = end
        parts.append(self.text[at:])
        origin.extend(self.origin[at:])
        return SeenText("".join(parts), origin)

    def views(self) -> Iterator[tuple[SeenText, Reading]]:
        """The text, then read through emphasis, through code marks too, and with no
        underscore at all; each with what it may be judged for. Views equal to one before
        are skipped."""
        yield self, Reading.LABELS
        if not MARKED.search(self.text):  # most lines: nothing to read through
            return
        shown = [self.text]
        for view, reading in _views(self):
            if view.text not in shown:
                shown.append(view.text)
                yield view, reading

    def read(self) -> str:
        """The text read through emphasis: what a person takes it to say."""
        return self.without(EMPHASIS).without(EDGE_UNDERSCORES).text

    def lines(self) -> Iterator[SeenText]:
        """The text split at line breaks, each part keeping its origins."""
        at = 0
        for line in self.text.split("\n"):
            yield SeenText(line, self.origin[at:at + len(line)])
            at += len(line) + 1

    def source_span(self, start: int, end: int) -> tuple[int, int]:
        """Where the seen characters [start, end) came from, as [start, end) of the source."""
        return self.origin[start], self.origin[end - 1] + 1


def _views(text: SeenText) -> Iterator[tuple[SeenText, Reading]]:
    yield text.without(EMPHASIS).without(EDGE_UNDERSCORES), Reading.LABELS  # as `read`
    plain = text.without(MARKS).without(EDGE_UNDERSCORES)
    yield plain, Reading.SHAPES
    yield plain.without(UNDERSCORES), Reading.FORMS


def _fold(run: re.Match[str], parts: list[str], origin: array[int]) -> None:
    """A run of non-ASCII characters, folded and without its invisible characters."""
    at = run.start()
    for piece in INVISIBLE.split(run.group()):  # the visible pieces, in order
        at = run.string.index(piece, at) if piece else at
        if unicodedata.is_normalized("NFKC", piece):
            parts.append(piece)
            origin.extend(range(at, at + len(piece)))
        else:
            for index, char in enumerate(piece, at):
                folded = unicodedata.normalize("NFKC", char)
                parts.append(folded)
                origin.extend((index,) * len(folded))
        at += len(piece)
