"""What one search gathered before ranking: the query, the provider lists, the candidates."""

from __future__ import annotations

from collections.abc import Sequence

from attrs import evolve, frozen

from memory.domain.notes import Chunk, Note
from memory.domain.scope import ResolvedScope
from memory.domain.text import QueryFeatures
from memory.domain.time_questions import Period, periods


@frozen
class Hit:
    """One chunk a provider found, with that provider's raw score (higher is better)."""

    chunk: Chunk
    note: Note
    score: float


@frozen(kw_only=True)
class Query:
    """One search's question as the ranking steps read it."""

    text: str
    features: QueryFeatures
    scope: ResolvedScope
    today: str = ""  # ISO date, for review dates; "" ignores them
    periods: tuple[Period, ...] = ()  # the days, months, years it is bounded by

    @classmethod
    def of(cls, text: str, scope: ResolvedScope, today: str = "") -> Query:
        return cls(text=text, features=QueryFeatures.of(text), scope=scope, today=today,
                   periods=periods(text))


@frozen(kw_only=True)
class CandidateLists:
    """The three provider lists of one search, best first."""

    lexical: tuple[Hit, ...] = ()
    semantic: tuple[Hit, ...] = ()
    graph: tuple[Hit, ...] = ()  # in graph order; the score is not used

    def hits(self) -> dict[str, Hit]:
        """Each chunk's first hit, in list order (lexical, semantic, graph)."""
        found: dict[str, Hit] = {}
        for hit in (*self.lexical, *self.semantic, *self.graph):
            found.setdefault(hit.chunk.chunk_id, hit)
        return found

    def position(self) -> dict[str, int]:
        """Where each chunk first appears across the lists (0 = best)."""
        return {chunk_id: i for i, chunk_id in enumerate(self.hits())}


@frozen(kw_only=True)
class Gathered:
    """Everything one search read from the stores before ranking."""

    query: Query
    lists: CandidateLists
    warnings: tuple[str, ...] = ()


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


def best_chunk(chunks: Sequence[Chunk], features: QueryFeatures,
               position: dict[str, int]) -> Chunk | None:
    """The note's chunk another signal ranked best, else the one covering most terms."""
    known = [c for c in chunks if c.chunk_id in position]
    if known:
        return min(known, key=lambda c: position[c.chunk_id])
    if not chunks:
        return None
    return max(chunks, key=lambda c: (features.coverage(c.indexed_text), -c.ordinal))


def standing_out(related: Sequence[tuple[Note, float]], contrast: float) -> list[Note]:
    """Notes whose proximity is at least `contrast` times the median proximity.

    Where everything is tied through the same hubs (one project, shared tags) proximity
    carries no information and must not add noise.
    """
    if not related or contrast <= 0:
        return [note for note, _ in related]
    scores = sorted(score for _, score in related)
    median = scores[len(scores) // 2]
    return [note for note, score in related if score >= contrast * median]
