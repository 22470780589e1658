"""The focus, expand and redact steps: chosen candidates become cited, redacted evidence."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from attrs import evolve, frozen

from memory.domain.candidates import Candidate, Query
from memory.domain.context import Span, allot, expand_span
from memory.domain.evidence import EvidenceItem
from memory.domain.notes import Chunk
from memory.domain.secrets import key_block_open_at, redact_lines, redact_text


@frozen(kw_only=True)
class NoteText:
    """The indexed lines of one note and the line its body starts on (after front matter)."""

    lines: tuple[str, ...] = ()
    body_start: int = 1


@frozen
class LineFocus:
    """The focus step: an item starts on its chunk's line matching most query terms."""

    def focus(self, chunk: Chunk, free: Sequence[int], query: Query) -> Span | None:
        lines = chunk.text.split("\n")
        best, best_hits = None, 0
        for number in free:
            hits = len(query.features.matched_terms(lines[number - chunk.start_line]))
            if hits > best_hits:
                best, best_hits = number, hits
        return None if best is None else Span(start_line=best, end_line=best)


@frozen(kw_only=True)
class ContextConfig:
    """The expand step: how much of a note an item may show."""

    budget_chars: int = 24000  # shared by all items of a packet
    max_item_lines: int = 12

    def cited(self, chosen: Sequence[Candidate], texts: Mapping[str, NoteText], query: Query,
              focus: LineFocus | None) -> tuple[tuple[Candidate, EvidenceItem], ...]:
        """Each candidate that gets an item, with it: one whose lines earlier items already
        cite gets none (what search returns, and what memory_explain marks returned)."""
        cited: dict[str, list[Span]] = {}
        per_item = allot(self.budget_chars, len(chosen))
        items = []
        for c in chosen:
            blocked = cited.setdefault(c.note.path, [])
            span = start_of(c.chunk, blocked, query, focus)
            if span is None:  # everything it would cite is already cited above
                continue
            text = texts.get(c.note.memory_id, NoteText())
            if text.lines:
                span = self._expand(span, text, per_item, blocked)
            blocked.append(span)
            items.append((c, EvidenceItem.of(c, span, _text_of(span, text, c.chunk))))
        return tuple(items)

    def _expand(self, span: Span, text: NoteText, per_item: int, blocked: list[Span]) -> Span:
        # Never grow into the front matter: the body starts where the first chunk does.
        front = [Span(start_line=1, end_line=text.body_start - 1)] if text.body_start > 1 else []
        return expand_span(span, text.lines, self.max_item_lines, per_item, [*blocked, *front])


def start_of(chunk: Chunk, blocked: Sequence[Span], query: Query,
             focus: LineFocus | None) -> Span | None:
    """Where an item starts: the focus step's line among lines no earlier item cites, else
    the first run of such lines in the chunk; None if none is left."""
    taken = {i for b in blocked for i in range(b.start_line, b.end_line + 1)}
    free = [n for n in range(chunk.start_line, chunk.end_line + 1) if n not in taken]
    if not free:
        return None
    if focus is not None:
        span = focus.focus(chunk, free, query)
        if span is not None:
            return span
    run = [free[0]]
    for n in free[1:]:  # the first contiguous run of free lines
        if n != run[-1] + 1:
            break
        run.append(n)
    return Span(start_line=run[0], end_line=run[-1])


def _text_of(span: Span, text: NoteText, chunk: Chunk) -> str:
    return "\n".join(text.lines[span.start_line - 1: span.end_line]) if text.lines else chunk.text


def redacted(items: Sequence[EvidenceItem],
             texts: Mapping[str, NoteText]) -> tuple[EvidenceItem, ...]:
    """The redact step: no secret-shaped value leaves in an item's text, title or heading."""
    return tuple(evolve(item, title=redact_text(item.title), heading=redact_text(item.heading),
                        text=_redacted_text(item, texts.get(item.memory_id, NoteText())))
                 for item in items)


def _redacted_text(item: EvidenceItem, text: NoteText) -> str:
    if not text.lines:
        return redact_text(item.text)
    # A private key block can open any distance above the cited span (PGP keys run to
    # hundreds of lines): redact from its BEGIN so the block is seen whole.
    first = key_block_open_at(text.lines, item.start_line) or item.start_line
    clean, _ = redact_lines(text.lines[first - 1: item.end_line])
    return "\n".join(clean[item.start_line - first:])
