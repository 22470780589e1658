"""The order step: the first items shown are ordered by how tightly one of their lines
matches the query, weighed by how rare each query word is among the candidates."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from attrs import frozen

from memory.domain.candidates import Candidate, Query
from memory.domain.text import QueryFeatures


@frozen(kw_only=True)
class LineOrder:
    """Reorders the first `top` chosen items; which items are chosen does not change.

    A chunk's fused score says it is about the query; a line holding the query's rare
    words together says it answers it. Words found in most candidates (the subject every
    note shares) weigh little.
    """

    # Share of the best fused score a line holding every query word adds. Measured five-fold
    # on locomo-dev and on the frozen and engineering benchmarks (docs/benchmarks.md,
    # session 7): 0.25 gains MRR@10 in every fold and loses on neither benchmark; 0.5 and
    # more gain a little more on locomo but move answers down in both benchmarks, whose
    # prose wraps a sentence over lines.
    weight: float = 0.25
    # Only the first five: reordering ten changes which five are read first, and lost
    # EH@5 in three and four of five folds.
    top: int = 5
    window: int = 1  # lines read together as one (an answer may follow its question)

    def order(self, chosen: Sequence[Candidate], ranked: Sequence[Candidate],
              query: Query) -> tuple[Candidate, ...]:
        head = list(chosen[:self.top])
        if len(head) < 2 or self.weight <= 0 or not query.features.terms:
            return tuple(chosen)
        rarity = term_rarity(query.features, ranked)
        scale = self.weight * max(0.0, max(c.score for c in head))
        tight = {c.chunk.chunk_id: best_line_match(c, query.features, rarity, self.window)
                 for c in head}
        head.sort(key=lambda c: -(c.score + scale * tight[c.chunk.chunk_id]))
        return (*head, *chosen[self.top:])


def term_rarity(features: QueryFeatures, ranked: Sequence[Candidate]) -> dict[str, float]:
    """Each query word's inverse document frequency among the candidates' chunks.

    Counted on the exact word: matching inflections over every candidate would cost more
    than the rest of a search, and a rarity needs no more than the word's usual form.
    """
    count = max(len(ranked), 1)
    found = dict.fromkeys(features.terms, 0)
    exact = re.compile(r"\b(" + "|".join(map(re.escape, features.terms)) + r")\b")
    for c in ranked:
        for term in set(exact.findall(c.chunk.text.lower())):
            found[term] += 1
    return {term: math.log(1 + count / (1 + df)) for term, df in found.items()}


def best_line_match(c: Candidate, features: QueryFeatures, rarity: dict[str, float],
                    window: int = 1) -> float:
    """The share of the query's rarity-weighted words that the best run of `window` lines
    of a candidate's chunk holds."""
    total = sum(rarity.values())
    if total <= 0:
        return 0.0
    lines = c.chunk.text.split("\n")
    best = 0.0
    for i in range(len(lines)):
        found = features.matched_terms("\n".join(lines[i:i + window]))
        best = max(best, sum(rarity[t] for t in found))
    return best / total
