"""The select step: drop noise, then never two overlapping spans (optionally one per note first)."""

from __future__ import annotations

from collections.abc import Sequence

from attrs import frozen

from memory.domain.candidates import Candidate, Query
from memory.domain.notes import Chunk


@frozen(kw_only=True)
class SelectConfig:
    """Which ranked candidates become items."""

    # Every note gets its best item in before any note gets a second one.
    diversify: bool = False
    # An item found only by the vector index, and not even close to the query, is noise.
    min_item_similarity: float = 0.2

    def select(self, ranked: Sequence[Candidate], limit: int,
               query: Query | None = None) -> tuple[Candidate, ...]:
        """`query` is for a replacement step that reads it (benchmarks/tune_locomo.py's
        spread over notes, measured and not taken); this one does not."""
        return tuple(dedup(self.drop_noise(ranked), limit, self.diversify))

    def drop_noise(self, candidates: Sequence[Candidate]) -> list[Candidate]:
        """Remove candidates whose only support is a weak semantic match."""
        return [c for c in candidates
                if c.lexical_rank is not None or c.graph_rank is not None or c.bonus > 0
                or (c.semantic_score or 0.0) >= self.min_item_similarity]


def _overlaps(a: Chunk, b: Chunk) -> bool:
    return a.path == b.path and a.start_line <= b.end_line and b.start_line <= a.end_line


def dedup(candidates: Sequence[Candidate], limit: int, diversify: bool = True) -> list[Candidate]:
    """Never two overlapping spans.

    With `diversify`, every note gets its best item in before any note gets a second one
    (the budget allows more of one note only when other notes run out); otherwise items
    are taken strictly best first.
    """
    chosen: list[Candidate] = []

    def admit(c: Candidate, cap: int) -> bool:
        same = [x for x in chosen if x.note.memory_id == c.note.memory_id]
        return len(same) < cap and not any(_overlaps(x.chunk, c.chunk) for x in same)

    for cap in ((1, limit) if diversify else (limit,)):
        for c in candidates:
            if len(chosen) >= limit:
                break
            if c not in chosen and admit(c, cap):
                chosen.append(c)
    chosen.sort(key=lambda c: -c.score)
    return chosen
