"""What reading a note and walking the graph answer: typed results of get, neighbours, path."""

from __future__ import annotations

from attrs import field, frozen

from memory.domain.budget import bounded_data, cut_line, shown_name
from memory.domain.evidence import AppliedScope
from memory.domain.graph import GraphPath, Neighbor
from memory.domain.notes import NoteDocument
from memory.domain.secrets import redact_data, redact_lines, redact_text

MAX_READ_LINES = 2000
MAX_READ_CHARS = 100_000  # of line text in one read (about 25k tokens)
MAX_FRONT_MATTER_CHARS = 10_000
MIN_CUT_ROOM = 1000  # less room than this left: a line to cut starts the next read instead


@frozen(kw_only=True)
class NoteLine:
    line: int  # 1-based
    text: str


@frozen(kw_only=True)
class NoteRead:
    """Lines of one note (redacted), numbered for exact citations. At most MAX_READ_LINES
    lines and MAX_READ_CHARS characters: `truncated` means more was asked for than shown,
    and `next_start_line` is where to ask again; a line longer than a read can hold is
    shown cut, ending in a `[cut: N more characters]` marker, and listed in `cut_lines`.
    An empty note reads as no lines (start_line 1, end_line 0)."""

    memory_id: str
    path: str
    title: str
    status: str
    content_hash: str
    front_matter: dict = field(factory=dict)
    line_count: int
    start_line: int
    end_line: int
    lines: tuple[NoteLine, ...]
    redacted_lines: tuple[int, ...] = ()
    cut_lines: tuple[int, ...] = ()
    truncated: bool = False
    next_start_line: int | None = None
    warnings: tuple[str, ...] = ()

    @classmethod
    def of(cls, doc: NoteDocument, first: int, last: int) -> NoteRead:
        """Lines first..last of a note (last < first: none), redacted, within the caps."""
        note = doc.note
        clean, findings = redact_lines(doc.lines)
        shown, cut = _read_lines(clean, first, min(last, len(clean)))
        end = shown[-1].line if shown else first - 1
        front, front_cut = bounded_data(redact_data(doc.front_matter), MAX_FRONT_MATTER_CHARS)
        more = end < min(last, len(clean))
        warnings = (*doc.warnings, *((f"front matter cut to about {MAX_FRONT_MATTER_CHARS:,} "
                                      "characters; the file holds the rest",)
                                     if front_cut else ()))
        return cls(
            memory_id=note.memory_id, path=note.path, title=shown_name(redact_text(note.title)),
            status=note.effective_status.value, content_hash=note.content_hash,
            front_matter=front, line_count=len(doc.lines), start_line=first, end_line=end,
            lines=shown, redacted_lines=tuple(sorted({f.line for f in findings
                                                      if first <= f.line <= end})),
            cut_lines=cut, truncated=more or bool(cut), next_start_line=end + 1 if more else None,
            warnings=warnings)


def _read_lines(lines, first: int, last: int) -> tuple[tuple[NoteLine, ...], tuple[int, ...]]:
    """Lines first..last that fit the caps. A line no read could hold whole is cut to the
    room left (it ends the read); any other line that does not fit waits for the next read."""
    shown: list[NoteLine] = []
    used = 0
    for number in range(first, last + 1):
        text, room = lines[number - 1], MAX_READ_CHARS - used
        if len(shown) == MAX_READ_LINES:
            break
        if len(text) <= room:
            shown.append(NoteLine(line=number, text=text))
            used += len(text) + 1
            continue
        if len(text) > MAX_READ_CHARS and (room >= MIN_CUT_ROOM or not shown):
            shown.append(NoteLine(line=number, text=cut_line(text, room)))
            return tuple(shown), (number,)
        break
    return tuple(shown), ()


@frozen(kw_only=True)
class NoteRef:
    memory_id: str
    path: str


@frozen(kw_only=True)
class Neighbourhood:
    """What a note is related to in the knowledge graph, up to `depth` hops, within the
    scope (a node of a note outside it, or reached only through one, is left out)."""

    memory_id: str
    path: str
    depth: int
    scope: AppliedScope
    graph_generation: str | None
    neighbors: tuple[Neighbor, ...]
    warnings: tuple[str, ...] = ()


@frozen(kw_only=True)
class RelationPath:
    """The shortest relationship path between two notes within the scope, or connected:
    false (`warnings` say when the only path found leaves the scope)."""

    source: NoteRef
    target: NoteRef
    scope: AppliedScope
    graph_generation: str | None
    connected: bool
    path: GraphPath | None = None
    warnings: tuple[str, ...] = ()
