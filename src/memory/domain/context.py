"""Context expansion: widen each cited span with neighbouring lines, within a budget."""

from __future__ import annotations

from collections.abc import Sequence

from attrs import frozen

from memory.domain.markdown import HEADING


@frozen(kw_only=True)
class Span:
    start_line: int  # 1-based inclusive
    end_line: int

    @property
    def size(self) -> int:
        return self.end_line - self.start_line + 1


def _is_heading(line: str) -> bool:
    return HEADING.match(line) is not None


def expand_span(span: Span, lines: Sequence[str], max_lines: int, max_chars: int,
                blocked: Sequence[Span] = ()) -> Span:
    """Grow a span alternately down and up while it stays within both budgets.

    Growth stops at blank-line-free limits of the file and never crosses a heading
    boundary below the span (a heading starts a different section). The original span
    is always kept whole even if it alone exceeds the budget. Lines inside `blocked`
    spans (already cited by earlier items) are never taken, so items never overlap.
    """
    taken = {i for b in blocked for i in range(b.start_line, b.end_line + 1)}
    n = len(lines)
    start = max(1, min(span.start_line, n or 1))
    end = max(start, min(span.end_line, n or start))
    chars = sum(len(lines[i - 1]) + 1 for i in range(start, end + 1)) if n else 0
    can_up, can_down = True, True
    while (end - start + 1) < max_lines and (can_up or can_down):
        if can_down:
            nxt = end + 1
            if nxt > n or nxt in taken or _is_heading(lines[nxt - 1]) \
                    or chars + len(lines[nxt - 1]) + 1 > max_chars:
                can_down = False
            else:
                end, chars = nxt, chars + len(lines[nxt - 1]) + 1
        if (end - start + 1) >= max_lines:
            break
        if can_up:
            prev = start - 1
            if prev < 1 or prev in taken or chars + len(lines[prev - 1]) + 1 > max_chars:
                can_up = False
            else:
                start, chars = prev, chars + len(lines[prev - 1]) + 1
                if _is_heading(lines[prev - 1]):
                    can_up = False
    return Span(start_line=start, end_line=end)


def text_of(span: Span, lines: Sequence[str]) -> str:
    return "\n".join(lines[span.start_line - 1: span.end_line])


def allot(budget_chars: int, count: int, floor: int = 200) -> int:
    """Per-item character allowance when a total budget is shared by `count` items."""
    if count <= 0:
        return budget_chars
    return max(floor, budget_chars // count)
