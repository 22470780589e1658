"""The no-answer step: is anything found plausibly about the query?"""

from __future__ import annotations

from collections.abc import Sequence

from attrs import frozen

from memory.domain.candidates import Candidate, Hit, Query
from memory.domain.secrets import redact_text
from memory.domain.text import QueryFeatures, mentions_name

LOW_CONFIDENCE = "low confidence: nothing found is clearly about this query"
EXACT_REASONS = ("identifier:", "path:", "phrase", "ticket:")


@frozen(kw_only=True)
class NoAnswerPolicy:
    """An answer needs a lexical hit covering enough of the query, or a close vector."""

    min_coverage: float = 0.34
    min_similarity: float = 0.2
    # A query naming something memory never mentions (a product, a flag) needs a vector
    # this close instead of `min_similarity`. A lexical hit covering `min_coverage` of its
    # words still answers it: the name is then another word for what the note holds
    # ("CIDR block" for a table headed "IP Range", "k8s" for Kubernetes) or a detail beside
    # the subject, not the subject itself.
    unknown_name_similarity: float = 0.55
    exact_match_answers: bool = True

    def decide(self, ranked: Sequence[Candidate], query: Query,
               unknown: Sequence[str]) -> str | None:
        """Why nothing found is plausibly about the query, or None when something is.

        `unknown` are query names memory does not mention in scope (see unknown_names).
        """
        top = ranked[:10]
        if self.exact_match_answers and any(
                r.startswith(EXACT_REASONS) for c in top for r in c.reasons):
            return None
        best_similarity = max((c.semantic_score or 0.0 for c in top), default=0.0)
        covered = max((query.features.coverage(c.chunk.indexed_text) for c in top
                       if c.lexical_rank is not None), default=0.0)
        close = self.unknown_name_similarity if unknown else self.min_similarity
        if covered >= self.min_coverage or best_similarity >= close:
            return None
        if unknown:
            return f"memory never mentions {redact_text(', '.join(unknown))} in this scope"
        return "nothing in this scope matched the query" if not ranked else \
            "no note found covers enough of the query's words, and none is close in meaning"


def unknown_names(candidates: Sequence[Candidate], features: QueryFeatures) -> tuple[str, ...]:
    """Names in the query that no candidate's text, title, alias or path contains."""
    if not features.names:
        return ()
    haystack = " ".join(f"{c.chunk.indexed_text} {' '.join(c.note.names)}" for c in candidates)
    return tuple(n for n in features.names
                 if not mentions_name(haystack, n, exact=n in features.identifiers))


def mentioned_by(hits: Sequence[Hit], name: str, features: QueryFeatures) -> bool:
    """Whether any of these hits mentions a query name, in its text or its note's names."""
    return any(mentions_name(f"{h.chunk.indexed_text} {' '.join(h.note.names)}", name,
                             exact=name in features.identifiers) for h in hits)
