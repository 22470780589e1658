"""File names and note paths a write may create: valid on Windows, macOS and Linux, in the root."""

from __future__ import annotations

import re
import unicodedata

from memory.domain.errors import InvalidRequest
from memory.domain.notes import note_path

# Windows refuses these as the part before the first dot, whatever the extension or case.
RESERVED_STEMS = frozenset({
    "CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$",
    *(f"{port}{digit}" for port in ("COM", "LPT") for digit in "0123456789\u00b9\u00b2\u00b3"),
})
FORBIDDEN = frozenset('<>:"/\\|?*')
# Direction overrides make a name read differently than it sorts and opens: a spoofing risk.
BIDI_CONTROLS = frozenset("\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
MAX_COMPONENT_BYTES = 255  # ext4 and most Unix file systems; NTFS and APFS allow as many units
# Windows' MAX_PATH (260) counts the absolute path: leave about 60 characters for the root.
MAX_PATH_CHARS = 200
MAX_STEM_CHARS = 80
NON_WORD = re.compile(r"[\W_]+")


def component_problem(name: str) -> str | None:
    """Why one folder or file name cannot be created everywhere, or None when it can."""
    if not name or name in (".", ".."):
        return "is empty or a relative step"
    if name.startswith("."):
        return "is hidden (starts with a dot): the index skips hidden files and folders"
    forbidden = "".join(sorted({c for c in name if c in FORBIDDEN}))
    if forbidden:
        return f"holds {forbidden!r}, not allowed in Windows file names"
    for char in name:
        if unicodedata.category(char) in ("Cc", "Cs", "Cn") or char in BIDI_CONTROLS:
            return f"holds the control or unassigned character U+{ord(char):04X}"
    if name[-1] in ". " or name[0].isspace():
        return "starts with a space or ends with a dot or a space (Windows drops them)"
    if name.split(".", 1)[0].rstrip(" ").upper() in RESERVED_STEMS:
        return "is a device name reserved by Windows"
    if len(name.encode("utf-8")) > MAX_COMPONENT_BYTES:
        return f"is longer than {MAX_COMPONENT_BYTES} bytes"
    return None


def writable_note_path(path: object) -> str:
    """A note path (relative, `/`-separated, NFC) that every supported system can create.

    InvalidRequest for an absolute path, a step out of the root, a hidden folder (`.git`,
    `.ai-memory`, ...), a name Windows, macOS or Linux refuses, or a path that is too long.
    """
    if not isinstance(path, str):
        raise InvalidRequest("path must be a string relative to the memory root")
    rel = note_path(unicodedata.normalize("NFC", path))
    for part in rel.split("/"):
        problem = component_problem(part)
        if problem:
            raise InvalidRequest(f"path {path!r}: the name {part!r} {problem}")
    if len(rel) > MAX_PATH_CHARS:
        raise InvalidRequest(f"path {path!r} is longer than {MAX_PATH_CHARS} characters")
    return rel


def slug(text: str, max_chars: int = MAX_STEM_CHARS) -> str:
    """Lower-case words joined by `-` (letters and digits of any script), cut at a word."""
    words = NON_WORD.sub("-", unicodedata.normalize("NFKC", text).lower()).strip("-")
    if len(words) > max_chars:
        head = words[:max_chars + 1]
        words = (head.rsplit("-", 1)[0] if "-" in head else head[:max_chars]).strip("-")
    return words


def note_file_name(title: str, number: int = 1) -> str:
    """`<slug>.md` for a title (`<slug>-<number>.md` past the first); never a reserved,
    hidden or empty name."""
    stem = slug(title) or "note"
    if stem.upper() in RESERVED_STEMS:
        stem = f"{stem}-note"
    return f"{stem}.md" if number == 1 else f"{stem}-{number}.md"
