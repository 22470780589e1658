"""The bounded rerank: exact-match bonuses and status penalties on the top of the fused list."""

from __future__ import annotations

from collections.abc import Sequence

from attrs import frozen

from memory.domain.candidates import Candidate, Query
from memory.domain.notes import Status
from memory.domain.text import QueryFeatures, contains_exact
from memory.domain.time_questions import day_of


@frozen(kw_only=True)
class RerankPolicy:
    """The rerank step: bonus points per exact match, penalties per status."""

    identifier: float = 3.0
    path: float = 2.0
    phrase: float = 2.0
    ticket: float = 2.0
    superseded: float = -2.0
    archived: float = -1.0
    needs_review: float = -0.1  # tie-breakers: a stale note is still the note asked for
    past_review: float = -0.1
    # A question bounded in time ("in June 2022", "on 25 May 2023") favours notes dated
    # within it, or up to `period_after` days later (a note tells of the day before).
    in_period: float = 2.0
    period_after: int = 1
    window: int = 50  # only the top of the fused list is reranked
    # One bonus point is this share of what leading one list of weight 1 adds to the fused
    # score (1/(k+1) under RRF, 1.0 under score fusion): an exact identifier (3 points)
    # outweighs leading one more list. Benchmarks are flat from 0.05 to 0.5 (docs/benchmarks.md).
    unit: float = 0.5

    def rerank(self, candidates: Sequence[Candidate], query: Query,
               leader: float = 1.0) -> tuple[Candidate, ...]:
        """Apply the bonuses and penalties to the top window, then re-sort it.

        `leader` is what ranking first in one list of weight 1 adds to a fused score; bonus
        points are scaled to it, so they weigh the same under either fusion.
        """
        tickets = {t.upper() for t in query.scope.query_tickets}
        point = self.unit * leader
        head = [_timed(_adjust(c, query.features, tickets, query.today, self, point),
                       query, self, point) for c in candidates[:self.window]]
        head.sort(key=lambda c: -c.score)
        return (*head, *candidates[self.window:])


def _adjust(c: Candidate, f: QueryFeatures, tickets: set[str], today: str | None,
            p: RerankPolicy, point: float) -> Candidate:
    text = c.chunk.text
    names = " ".join(c.note.names)
    for ident in f.identifiers:
        if contains_exact(text, ident) or contains_exact(names, ident):
            c = c.with_bonus(p.identifier * point, f"identifier:{ident}")
    for path in f.paths:
        if contains_exact(c.note.path, path) or contains_exact(text, path):
            c = c.with_bonus(p.path * point, f"path:{path}")
    for phrase in f.phrases:
        if contains_exact(text, phrase):
            c = c.with_bonus(p.phrase * point, "phrase")
    if c.note.ticket and c.note.ticket.upper() in tickets:
        c = c.with_bonus(p.ticket * point, f"ticket:{c.note.ticket}")
    status = c.note.effective_status
    if status is Status.SUPERSEDED:
        c = c.with_bonus(p.superseded * point, "superseded")
    elif status is Status.ARCHIVED:
        c = c.with_bonus(p.archived * point, "archived")
    elif status is Status.NEEDS_REVIEW:
        c = c.with_bonus(p.needs_review * point, "needs-review")
    if today and c.note.review_after and c.note.review_after[:10] < today[:10]:
        c = c.with_bonus(p.past_review * point, "past-review-date")
    return c


def _timed(c: Candidate, query: Query, p: RerankPolicy, point: float) -> Candidate:
    if not (p.in_period and query.periods):
        return c
    day = day_of(c.note.created)
    if day is not None and any(q.holds(day, p.period_after) for q in query.periods):
        c = c.with_bonus(p.in_period * point, "in-period")
    return c


