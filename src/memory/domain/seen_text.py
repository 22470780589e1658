"""Text as a reader sees it: compatibility forms folded (NFKC), invisible characters left out,
Markdown emphasis and wrapped lines seen through. Each character keeps the index it came from,
so what is found in the seen text is hidden in the original, and nothing else is."""

from __future__ import annotations

import enum
import html
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
# What `of` has to look at: non-ASCII runs, HTML character references.
SPECIAL = re.compile(r"[^\x00-\x7f]+"
                     r"|&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
# Emphasis (`**ghp_**abc`, `~~AKIA~~...`, `pass**word**:`), code marks (`` `ghp_`abc ``) and
# HTML tags or comments (`ghp_<b></b>abc`) are read through inside a word only: at a word's
# edge they already end it, and taken away there they would let a value run on (`Bearer`)
# stays` is no token). Labels are read with code marks and tags kept. Then an underscore
# only where it cannot be part of a name: a run of two or more, or one at a word's edge
# (`_password_`; `ghp_` and `DB_PASSWORD` keep theirs); `(?<!__)` starts at a run's start.
TOKEN_CHARS = r"A-Za-z0-9_\-+/="
TOKEN_SET = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+/=")
EMPHASIS = re.compile(r"[*~]+")
MARKS = re.compile(r"(?:[*~`]|</?[A-Za-z][A-Za-z0-9]{0,15}>|<!--.{0,64}?-->)+")
EDGE_UNDERSCORES = re.compile(r"_(?<!__)(?:_++|(?<![A-Za-z0-9]_)|(?![A-Za-z0-9]))")
UNDERSCORES = re.compile(r"_+")  # `_AKIA_IOSF...`: emphasis inside a word, a name broken
ESCAPES = re.compile(r"\\(?=[!-/:-@\[-`{-~])")  # Markdown shows `ghp\_abc` as `ghp_abc`
MARKED = re.compile(r"[*~`_<\\]")
# A value wrapped onto the next line: a break between two characters a token may hold, maybe
# after a line continuation (`\`) or before a quote's `>`.
WRAP = re.compile(rf"(?<=[{TOKEN_CHARS}])\\?[ \t]*\n[ \t>]*(?=[{TOKEN_CHARS}])")


def wraps(line: str, next_line: str) -> bool:
    """Whether a value may run on from `line` to `next_line`, as `WRAP` joins them."""
    end = line.rstrip(" \t")
    end = end[:-1] if end.endswith("\\") else end
    return end[-1:] in TOKEN_SET and next_line.lstrip(" \t>")[:1] in TOKEN_SET


class Reading(enum.IntEnum):
    """What a view of a text may be judged for: the more it differs from what was written,
    the less of the secret rules still hold in it."""

    FORMS = 0  # only shapes known by their form: names are broken (no underscore left)
    SHAPES = 1  # every shape, placeholders judged
    LABELS = 2  # shapes and labelled values (`password: x`)


@frozen
class SeenText:
    """`text` as read, and for each of its characters the source's [start, end) it came from
    (increasing: characters are only folded, decoded or left out, never moved)."""

    text: str
    origin: Sequence[int]
    ends: Sequence[int]

    @classmethod
    def of(cls, source: str) -> SeenText:
        if source.isascii() and "&" not in source:  # nothing to fold, decode or hide
            return cls(source, range(len(source)), range(1, len(source) + 1))
        parts, origin, ends, at = [], array("l"), array("l"), 0
        for found in SPECIAL.finditer(source):
            parts.append(source[at:found.start()])
            origin.extend(range(at, found.start()))
            ends.extend(range(at + 1, found.start() + 1))
            _fold(found, parts, origin, ends)
            at = found.end()
        parts.append(source[at:])
        origin.extend(range(at, len(source)))
        ends.extend(range(at + 1, len(source) + 1))
        return cls("".join(parts), origin, ends)

    def without(self, pattern: re.Pattern[str], inside: bool = False) -> SeenText:
        """The text with every match of `pattern` left out; `inside`: only a match between two
        characters of a token."""
        text = self.text
        cuts = [found.span() for found in pattern.finditer(text) if not inside or (
            text[found.start() - 1:found.start()] in TOKEN_SET
            and text[found.end():found.end() + 1] in TOKEN_SET)]
        if not cuts:
            return self
        parts, origin, ends, at = [], array("l"), array("l"), 0
        for start, end in [*cuts, (len(self.text), len(self.text))]:
            parts.append(self.text[at:start])
            origin.extend(self.origin[at:start])
            ends.extend(self.ends[at:start])
            at = end
        return SeenText("".join(parts), origin, ends)

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
        return self.without(ESCAPES).without(EMPHASIS, inside=True).without(EDGE_UNDERSCORES).text

    def source_span(self, start: int, end: int) -> tuple[int, int]:
        """Where the seen characters [start, end) came from, as [start, end) of the source."""
        return self.origin[start], self.ends[end - 1]


def _views(text: SeenText) -> Iterator[tuple[SeenText, Reading]]:
    text = text.without(ESCAPES)
    yield text.without(EMPHASIS, inside=True).without(EDGE_UNDERSCORES), Reading.LABELS
    plain = text.without(MARKS, inside=True).without(EDGE_UNDERSCORES)
    yield plain, Reading.SHAPES
    yield plain.without(UNDERSCORES), Reading.FORMS


def _fold(found: re.Match[str], parts: list[str], origin: array[int], ends: array[int]) -> None:
    """Non-ASCII characters folded and without the invisible ones, or an HTML character
    reference decoded (`&#8203;`, `&shy;`, `&#x67;`: Markdown shows what they stand for)."""
    if found.group().startswith("&"):
        decoded = html.unescape(found.group())
        text = SeenText.of(decoded) if decoded != found.group() else None
        if text is None or len(text.text) > 2:  # unknown, or no character reference
            parts.append(found.group())
            origin.extend(range(found.start(), found.end()))
            ends.extend(range(found.start() + 1, found.end() + 1))
        else:
            parts.append(text.text)
            origin.extend((found.start(),) * len(text.text))
            ends.extend((found.end(),) * len(text.text))
        return
    at = found.start()
    for piece in INVISIBLE.split(found.group()):  # the visible pieces, in order
        at = found.string.index(piece, at) if piece else at
        if unicodedata.is_normalized("NFKC", piece):
            parts.append(piece)
            origin.extend(range(at, at + len(piece)))
            ends.extend(range(at + 1, at + len(piece) + 1))
        else:
            for index, char in enumerate(piece, at):
                folded = unicodedata.normalize("NFKC", char)
                parts.append(folded)
                origin.extend((index,) * len(folded))
                ends.extend((index + 1,) * len(folded))
        at += len(piece)
