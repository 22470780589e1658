"""Reciprocal Rank Fusion of ranked candidate lists."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence

RRF_K = 60


def reciprocal_rank_fusion(rankings: Mapping[str, Sequence[Hashable]],
                           weights: Mapping[str, float] | None = None,
                           k: int = RRF_K) -> list[tuple[Hashable, float]]:
    """Fuse ranked lists: score(d) = sum over lists of weight / (k + rank), rank from 1.

    A key repeated within one list counts at its first (best) rank only. Ties keep the
    order in which keys first appeared, so the result is deterministic.
    """
    if k <= 0:
        raise ValueError("RRF k must be positive")
    scores: dict[Hashable, float] = {}
    for signal, ranked in rankings.items():
        weight = 1.0 if weights is None else weights.get(signal, 1.0)
        if weight <= 0:
            continue
        seen: set[Hashable] = set()
        for rank, key in enumerate(ranked, start=1):
            if key in seen:
                continue
            seen.add(key)
            scores[key] = scores.get(key, 0.0) + weight / (k + rank)
    order = {key: i for i, key in enumerate(scores)}
    return sorted(scores.items(), key=lambda kv: (-kv[1], order[kv[0]]))


def normalized_score_fusion(scored: Mapping[str, Sequence[tuple[Hashable, float]]],
                            weights: Mapping[str, float] | None = None) -> list[tuple[Hashable, float]]:
    """Fuse lists by min-max normalised scores: score(d) = sum of weight * norm(score).

    Unlike RRF this keeps how far ahead the leader of a list is; a key missing from a list
    gets nothing from it.
    """
    fused: dict[Hashable, float] = {}
    for signal, items in scored.items():
        weight = 1.0 if weights is None else weights.get(signal, 1.0)
        if weight <= 0 or not items:
            continue
        values = [v for _, v in items]
        low, high = min(values), max(values)
        span = (high - low) or 1.0
        seen: set[Hashable] = set()
        for key, value in items:
            if key in seen:
                continue
            seen.add(key)
            fused[key] = fused.get(key, 0.0) + weight * ((value - low) / span if high > low else 1.0)
    order = {key: i for i, key in enumerate(fused)}
    return sorted(fused.items(), key=lambda kv: (-kv[1], order[kv[0]]))
