"""NoteBrowser: the indexed notes page by page, and one note's text as a person wrote it."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable

from attrs import evolve, frozen

from memory.application.browse.note_texts import NoteTexts
from memory.application.search.requests import MAX_NAME_CHARS, bounded_int, clean_text
from memory.domain.errors import InvalidRequest, NotFound, Unavailable
from memory.domain.notes import Note, note_path
from memory.domain.secrets import redact_lines, redact_text
from memory.ports.note_catalogue import NoteCatalogue
from memory.ports.index_generations import IndexGenerations
from memory.ports.note_source import NoteSource

PAGE_SIZE = 100
MAX_PAGE_SIZE = 500
# A note may be 2 MB on disk; a client pastes a read note whole into the model's context.
MAX_TEXT_CHARS = 100_000


@frozen
class NotePage:
    """Notes in path order (titles redacted) and the cursor of the next page, None at the end."""

    notes: tuple[Note, ...]
    next_cursor: str | None


@frozen(kw_only=True)
class NoteText:
    """A note's file, front matter included, secret values redacted, cut at a line if long."""

    note: Note
    text: str
    lines_shown: int
    line_count: int
    redacted_lines: tuple[int, ...]

    @property
    def cut(self) -> bool:
        return self.lines_shown < self.line_count


class NoteBrowser:
    """Reads over the current index generation; a note not indexed is not offered."""

    def __init__(self, *, catalogue: NoteCatalogue, source: NoteSource, index: IndexGenerations,
                 max_chars: int = MAX_TEXT_CHARS,
                 before_read: Callable[[], object] | None = None):
        self._catalogue = catalogue
        self._texts = NoteTexts(source=source, catalogue=catalogue)
        self._index = index
        self._max_chars = max_chars
        # The catch-up step searches run first: a note saved a moment ago is offered too.
        self._before_read = before_read or (lambda: None)

    def page(self, cursor: str | None = None, size: int = PAGE_SIZE) -> NotePage:
        """One page of notes after the cursor; a cursor stays valid across generations."""
        size = bounded_int(size, "size", 1, MAX_PAGE_SIZE)
        after = _after(cursor)
        self._before_read()
        self._index.current()  # switch to the newest published generation first
        notes = sorted((n for n in self._catalogue.notes() if after is None or n.path > after),
                       key=lambda n: n.path)
        shown = tuple(evolve(n, title=redact_text(n.title)) for n in notes[:size])
        more = len(notes) > size
        return NotePage(shown, _cursor_after(shown[-1].path) if more else None)

    def read_path(self, path: str) -> NoteText:
        if isinstance(path, str) and len(path) > MAX_NAME_CHARS:
            raise InvalidRequest(f"path is too long ({len(path)} characters, at most "
                                 f"{MAX_NAME_CHARS})")
        rel = note_path(path)  # not stripped: " a.md" is a name a file may have
        self._require_index()
        note = next((n for n in self._catalogue.find(rel) if n.path == rel), None)
        if note is None:
            raise NotFound(f"no indexed note at {rel!r} (a note written just now is indexed "
                           "within seconds by a running server, or by `ai-memory refresh`)")
        return self._text(note)

    def read_id(self, memory_id: str) -> NoteText:
        name = clean_text(memory_id, "memory_id", MAX_NAME_CHARS)
        self._require_index()
        note = self._catalogue.note(name)
        if note is None:
            raise NotFound(f"no indexed note has memory_id {name!r}")
        return self._text(note)

    def _require_index(self) -> None:
        self._before_read()
        if self._index.current() is None:
            raise Unavailable("not indexed: no index yet: run `ai-memory refresh` to build it")

    def _text(self, note: Note) -> NoteText:
        doc = self._texts.load(note.path, note)
        lines, findings = redact_lines(doc.lines)
        shown, text = _within(lines, self._max_chars)
        if shown < len(lines):
            text += _cut_notice(note.path, shown, len(lines), self._max_chars)
        return NoteText(note=evolve(doc.note, title=redact_text(doc.note.title)), text=text,
                        lines_shown=shown, line_count=len(lines),
                        redacted_lines=tuple(sorted({f.line for f in findings})))


def _within(lines: tuple[str, ...], max_chars: int) -> tuple[int, str]:
    """How many whole lines fit in max_chars, and their text; a first line too long is cut."""
    used = 0
    for count, line in enumerate(lines):
        used += len(line) + (1 if count else 0)
        if used > max_chars:
            if count == 0:
                return 0, line[:max_chars]
            return count, "\n".join(lines[:count])
    return len(lines), "\n".join(lines)


def _cut_notice(path: str, shown: int, total: int, max_chars: int) -> str:
    where = f"lines 1-{shown} of {total} are shown" if shown else "line 1 is cut short"
    return (f"\n\n[ai-memory: this note is cut here: {where}, at most {max_chars} characters "
            f"per read. Read the rest with memory_get(identity={path!r}, "
            f"start_line={shown + 1}).]")


def _cursor_after(path: str) -> str:
    return base64.urlsafe_b64encode(path.encode("utf-8")).decode("ascii")


def _after(cursor: str | None) -> str | None:
    if cursor is None or cursor == "":
        return None
    try:
        return base64.urlsafe_b64decode(clean_text(cursor, "cursor", 4 * MAX_NAME_CHARS)
                                        .encode("ascii")).decode("utf-8")
    except (binascii.Error, UnicodeError, ValueError):
        raise InvalidRequest("invalid cursor: pass the nextCursor of the previous page") from None
