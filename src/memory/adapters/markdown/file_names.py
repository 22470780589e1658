"""File names as note paths: printable text for names that are not, and back again.

A Linux file name is bytes: it may not be valid UTF-8 (a Latin-1 archive unpacked) and may
hold newlines or other control characters. Python hands such names over with surrogate
escapes, which no JSON writer, SQLite or terminal accepts. A note path spells each such
byte (or control character) as `%XX` (and `%` itself as `%25` in such a name); the name is
found again from that spelling.
"""

from __future__ import annotations

import os
import re
import unicodedata

_ESCAPED = re.compile(r"%([0-9A-F]{2})")


def _unprintable(char: str) -> bool:
    return unicodedata.category(char) in ("Cc", "Cs", "Zl", "Zp")


def printable_name(name: str) -> str:
    """One path segment as the index spells it; printable names are kept as they are."""
    if not any(_unprintable(c) for c in name):
        return name
    out = []
    for char in name:
        if char == "%":  # so that the spelling reads back to exactly this name
            out.append("%25")
        elif not _unprintable(char):
            out.append(char)
        elif "\udc80" <= char <= "\udcff":  # an undecodable byte, as os.fsdecode gives it
            out.append(f"%{ord(char) - 0xDC00:02X}")
        else:
            raw = char.encode("utf-8", "surrogatepass")
            out.append("".join(f"%{b:02X}" for b in raw))
    return "".join(out)


def printable_path(path: str) -> str:
    """printable_name of every segment of a `/`-separated path."""
    return "/".join(printable_name(part) for part in path.split("/"))


def _byte_name(spelled: str) -> str | None:
    """The file-system name whose printable spelling this is, if it holds escapes."""
    if not _ESCAPED.search(spelled):
        return None
    raw = bytearray()
    for piece in re.split(r"(%[0-9A-F]{2})", spelled):
        raw += bytes([int(piece[1:], 16)]) if _ESCAPED.fullmatch(piece) \
            else piece.encode("utf-8", "surrogateescape")
    name = os.fsdecode(bytes(raw))
    return name if printable_name(name) == spelled else None


def find_entry(folder: str, spelled: str) -> str:
    """The name in folder a printable segment stands for: the segment itself when such a
    file exists (a name may really hold `%E9`), else the name it spells, else itself."""
    literal = os.path.join(folder, spelled)
    if os.path.lexists(literal):
        return spelled
    name = _byte_name(spelled)
    if name is not None and "\x00" not in name and "/" not in name \
            and os.path.lexists(os.path.join(folder, name)):
        return name
    return spelled


def real_path(root: str, path: str) -> str:
    """The file-system path of a note path under root (segments resolved one by one)."""
    current = root
    for part in path.split("/"):
        current = os.path.join(current, find_entry(current, part))
    return current
