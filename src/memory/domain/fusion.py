"""Fusion of the provider lists into one ranking: min-max score fusion or reciprocal rank fusion."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import TypeVar

from attrs import field, frozen, validators

from memory.domain.candidates import Candidate, CandidateLists, Hit
from memory.domain.text import QueryFeatures

RRF_K = 60
K = TypeVar("K", bound=Hashable)  # what the lists rank: chunk ids here


def reciprocal_rank_fusion(rankings: Mapping[str, Sequence[K]],
                           weights: Mapping[str, float] | None = None,
                           k: int = RRF_K) -> list[tuple[K, float]]:
    """Fuse ranked lists: score(d) = sum over lists of weight / (k + rank), rank from 1.

    A key repeated within one list counts at its first (best) rank only. Ties keep the
    order in which keys first appeared, so the result is deterministic.
    """
    if k <= 0:
        raise ValueError("RRF k must be positive")
    scores: dict[K, float] = {}
    for signal, ranked in rankings.items():
        weight = 1.0 if weights is None else weights.get(signal, 1.0)
        if weight <= 0:
            continue
        seen: set[K] = set()
        for rank, key in enumerate(ranked, start=1):
            if key in seen:
                continue
            seen.add(key)
            scores[key] = scores.get(key, 0.0) + weight / (k + rank)
    order = {key: i for i, key in enumerate(scores)}
    return sorted(scores.items(), key=lambda kv: (-kv[1], order[kv[0]]))


def normalized_score_fusion(scored: Mapping[str, Sequence[tuple[K, float]]],
                            weights: Mapping[str, float] | None = None) -> list[tuple[K, float]]:
    """Fuse lists by min-max normalised scores: score(d) = sum of weight * norm(score).

    Unlike RRF this keeps how far ahead the leader of a list is; a key missing from a list
    gets nothing from it.
    """
    fused: dict[K, float] = {}
    for signal, items in scored.items():
        weight = 1.0 if weights is None else weights.get(signal, 1.0)
        if weight <= 0 or not items:
            continue
        values = [v for _, v in items]
        low, high = min(values), max(values)
        span = (high - low) or 1.0
        seen: set[K] = set()
        for key, value in items:
            if key in seen:
                continue
            seen.add(key)
            fused[key] = fused.get(key, 0.0) + weight * ((value - low) / span if high > low else 1.0)
    order = {key: i for i, key in enumerate(fused)}
    return sorted(fused.items(), key=lambda kv: (-kv[1], order[kv[0]]))


@frozen(kw_only=True)
class FusionConfig:
    """The fuse step; defaults measured on the eval sets (docs/benchmarks.md)."""

    # "score": min-max normalised scores, summed with the weights below (keeps how far a
    # list's leader is ahead); "rrf": reciprocal rank fusion with rrf_k.
    method: str = field(default="score", validator=validators.in_(("score", "rrf")))
    rrf_k: int = 10
    weights: dict[str, float] = field(
        factory=lambda: {"lexical": 1.0, "semantic": 0.5, "graph": 0.1})
    # When no lexical hit covers this share of the query's words, the words are probably
    # not the ones the notes use (a paraphrase): trust the vectors more for this query.
    weak_lexical_coverage: float = 0.5
    rescue_weights: dict[str, float] = field(
        factory=lambda: {"lexical": 0.5, "semantic": 1.0, "graph": 0.3})

    @property
    def leader(self) -> float:
        """What ranking first in one list of weight 1 adds to a fused score."""
        return 1.0 if self.method == "score" else 1.0 / (self.rrf_k + 1)

    def weights_for(self, lexical: Sequence[Hit], features: QueryFeatures) -> dict[str, float]:
        best = max((features.coverage(h.chunk.indexed_text) for h in lexical[:3]), default=0.0)
        return self.weights if best >= self.weak_lexical_coverage else self.rescue_weights

    def fuse(self, lists: CandidateLists, features: QueryFeatures) -> tuple[Candidate, ...]:
        """One candidate per chunk any list holds, best fused score first."""
        weights = self.weights_for(lists.lexical, features)
        if self.method == "score":
            fused = normalized_score_fusion(
                {"lexical": [(h.chunk.chunk_id, h.score) for h in lists.lexical],
                 "semantic": [(h.chunk.chunk_id, h.score) for h in lists.semantic],
                 "graph": [(h.chunk.chunk_id, 1.0 / (1 + i)) for i, h in enumerate(lists.graph)]},
                weights)
        else:
            fused = reciprocal_rank_fusion(
                {"lexical": [h.chunk.chunk_id for h in lists.lexical],
                 "semantic": [h.chunk.chunk_id for h in lists.semantic],
                 "graph": [h.chunk.chunk_id for h in lists.graph]}, weights, self.rrf_k)
        return _candidates(fused, lists)


def _candidates(fused: Sequence[tuple[str, float]],
                lists: CandidateLists) -> tuple[Candidate, ...]:
    lex = {h.chunk.chunk_id: (i, h.score) for i, h in enumerate(lists.lexical, 1)}
    sem = {h.chunk.chunk_id: (i, h.score) for i, h in enumerate(lists.semantic, 1)}
    gra = {h.chunk.chunk_id: i for i, h in enumerate(lists.graph, 1)}
    hits = lists.hits()
    out = []
    for chunk_id, score in fused:
        hit = hits[chunk_id]
        lr, ls = lex.get(chunk_id, (None, None))
        sr, ss = sem.get(chunk_id, (None, None))
        out.append(Candidate(chunk=hit.chunk, note=hit.note, fused=score, lexical_rank=lr,
                             lexical_score=ls, semantic_rank=sr, semantic_score=ss,
                             graph_rank=gra.get(chunk_id)))
    return tuple(out)
