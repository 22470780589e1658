"""What memory_explain answers: the parsed query, each signal's candidates, the fused ranking."""

from __future__ import annotations

from attrs import field, frozen

from memory.domain.evidence import AppliedScope, Generation, Signals


@frozen(kw_only=True)
class RankScore:
    """A candidate's rank (1 = best) and raw score in one provider's list, if there."""

    rank: int | None = None
    score: float | None = None


@frozen(kw_only=True)
class CandidateSignals:
    lexical: RankScore
    semantic: RankScore  # score: cosine similarity
    graph: RankScore


@frozen(kw_only=True)
class ExplainedCandidate:
    """One ranked candidate: its fused score, bonus points, signals and why."""

    rank: int
    memory_id: str
    path: str
    citation: str  # the chunk's span (an item may cite a narrower one)
    fused: float
    bonus: float
    score: float
    signals: CandidateSignals
    matched_terms: tuple[str, ...]
    reasons: tuple[str, ...]
    status: str
    returned: bool


@frozen(kw_only=True)
class SignalCounts:
    lexical: int
    semantic: int
    graph: int


@frozen(kw_only=True)
class IdentityExplanation:
    """Why one named note was or was not returned."""

    name: str
    found: bool
    why: str
    memory_id: str | None = None
    path: str | None = None
    status: str | None = None
    returned: bool = False
    best_rank: int | None = None
    signals: Signals | None = None
    matched_terms: tuple[str, ...] = ()


@frozen(kw_only=True)
class Explanation:
    """A search taken apart: what it asked, under which scope, and how it ranked."""

    query: str
    scope: AppliedScope
    generation: Generation
    no_answer: bool
    terms: tuple[str, ...]
    identifiers: tuple[str, ...]
    fusion: str
    weights: dict[str, float] = field(factory=dict)
    rrf_k: int
    counts: SignalCounts
    candidates: tuple[ExplainedCandidate, ...]
    warnings: tuple[str, ...] = ()
    identity: IdentityExplanation | None = None
    no_answer_reason: str | None = None
