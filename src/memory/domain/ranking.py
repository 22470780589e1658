"""Candidates, the bounded rerank, dedup and the no-answer decision."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from attrs import evolve, frozen

from memory.domain.notes import Chunk, Note, Status
from memory.domain.text import QueryFeatures, contains_exact, mentions_name, title_terms


@frozen(kw_only=True)
class Candidate:
    """A chunk on its way into the packet, with every signal that touched it."""

    chunk: Chunk
    note: Note
    fused: float = 0.0
    lexical_rank: int | None = None
    lexical_score: float | None = None
    semantic_rank: int | None = None
    semantic_score: float | None = None  # cosine similarity
    graph_rank: int | None = None
    graph_score: float | None = None
    bonus: float = 0.0
    reasons: tuple[str, ...] = ()

    @property
    def score(self) -> float:
        return self.fused + self.bonus

    def with_bonus(self, amount: float, reason: str) -> Candidate:
        return evolve(self, bonus=self.bonus + amount, reasons=(*self.reasons, reason))


@frozen(kw_only=True)
class RerankPolicy:
    identifier: float = 3.0
    path: float = 2.0
    phrase: float = 2.0
    ticket: float = 2.0
    ticket_mention: float = 0.5
    title: float = 0.5
    superseded: float = -2.0
    archived: float = -1.0
    needs_review: float = -0.1  # tie-breakers: a stale note is still the note asked for
    past_review: float = -0.1
    window: int = 50  # only the top of the fused list is reranked
    # One bonus point is this share of what leading one list of weight 1 adds to the fused
    # score (1/(k+1) under RRF, 1.0 under score fusion): an exact identifier (3 points)
    # outweighs leading one more list. Benchmarks are flat from 0.05 to 0.5 (docs/benchmarks.md).
    unit: float = 0.5


def rerank(candidates: Sequence[Candidate], features: QueryFeatures,
           query_tickets: Iterable[str] = (), today: str | None = None,
           policy: RerankPolicy = RerankPolicy(), leader: float = 1.0) -> list[Candidate]:
    """Apply exact-match bonuses and status penalties to the top window, then re-sort.

    `leader` is what ranking first in one list of weight 1 adds to a fused score; bonus
    points are scaled to it, so they weigh the same under either fusion.
    """
    tickets = {t.upper() for t in query_tickets}
    point = policy.unit * leader
    head = [_adjust(c, features, tickets, today, policy, point)
            for c in candidates[:policy.window]]
    head.sort(key=lambda c: -c.score)
    return head + list(candidates[policy.window:])


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
    elif any(contains_exact(text, t) for t in tickets):
        c = c.with_bonus(p.ticket_mention * point, "ticket-mention")
    if f.terms and set(f.terms) <= title_terms(c.note.title):
        c = c.with_bonus(p.title * point, "title")
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


def _overlaps(a: Chunk, b: Chunk) -> bool:
    return a.path == b.path and a.start_line <= b.end_line and b.start_line <= a.end_line


def dedup(candidates: Sequence[Candidate], limit: int, per_note: int = 1,
          diversify: bool = True) -> list[Candidate]:
    """Never two overlapping spans; at most `per_note` items of one note.

    With `diversify`, every note gets its best item in before any note gets a second one
    (the budget allows more of one note only when other notes run out); otherwise items
    are taken strictly best first.
    """
    chosen: list[Candidate] = []

    def admit(c: Candidate, cap: int) -> bool:
        same = [x for x in chosen if x.note.memory_id == c.note.memory_id]
        return len(same) < cap and not any(_overlaps(x.chunk, c.chunk) for x in same)

    for cap in ((1, per_note) if diversify else (per_note,)):
        for c in candidates:
            if len(chosen) >= limit:
                break
            if c not in chosen and admit(c, cap):
                chosen.append(c)
    chosen.sort(key=lambda c: -c.score)
    return chosen


@frozen(kw_only=True)
class NoAnswerPolicy:
    """An answer needs a lexical hit covering enough of the query, or a close vector."""

    min_coverage: float = 0.34
    min_similarity: float = 0.2
    # A query naming something memory never mentions (a product, a flag) has no answer
    # unless the vector match is this close anyway.
    unknown_name_similarity: float = 0.55
    exact_match_answers: bool = True
    # An item found only by the vector index, and not even close to the query, is noise.
    min_item_similarity: float = 0.2


def unknown_names(candidates: Sequence[Candidate], features: QueryFeatures) -> tuple[str, ...]:
    """Names in the query that no candidate's text, title, alias or path contains."""
    if not features.names:
        return ()
    haystack = " ".join(f"{c.chunk.indexed_text} {' '.join(c.note.names)}" for c in candidates)
    return tuple(n for n in features.names
                 if not mentions_name(haystack, n, exact=n in features.identifiers))


def is_no_answer(candidates: Sequence[Candidate], features: QueryFeatures,
                 policy: NoAnswerPolicy = NoAnswerPolicy(),
                 unknown: Sequence[str] | None = None) -> bool:
    """True when nothing found is plausibly about the query.

    `unknown` are query names memory does not mention in scope (default: those no
    candidate mentions).
    """
    top = candidates[:10]
    if policy.exact_match_answers and any(
            r.startswith(("identifier:", "path:", "phrase", "ticket:")) for c in top for r in c.reasons):
        return False
    best_similarity = max((c.semantic_score or 0.0 for c in top), default=0.0)
    if unknown is None:
        unknown = unknown_names(candidates, features)
    if unknown:
        return best_similarity < policy.unknown_name_similarity
    for c in top:
        if c.lexical_rank is not None and \
                features.coverage(c.chunk.indexed_text) >= policy.min_coverage:
            return False
    return best_similarity < policy.min_similarity


def drop_noise(candidates: Sequence[Candidate], policy: NoAnswerPolicy = NoAnswerPolicy()) -> list[Candidate]:
    """Remove candidates whose only support is a weak semantic match."""
    return [c for c in candidates
            if c.lexical_rank is not None or c.graph_rank is not None or c.bonus > 0
            or (c.semantic_score or 0.0) >= policy.min_item_similarity]
