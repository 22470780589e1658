"""Names and note text made safe to print on one line of a text block."""

from __future__ import annotations


def shown(text: object) -> str:
    """`text` with every character that is not printable (newlines, carriage returns, other
    control and format characters, line separators) written as an escape, so a note
    title, path or line cannot start a line of its own or hide text from the reader."""
    value = str(text)
    if value.isprintable():
        return value
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii")
                   for c in value)
