"""memory_explain's answer: one search's trace taken apart into an Explanation value."""

from __future__ import annotations

from collections.abc import Sequence

from memory.application.retrieval import SearchTrace
from memory.application.search_config import SearchConfig
from memory.domain.candidates import Candidate
from memory.domain.evidence import AppliedScope, Generation, Signals
from memory.domain.explanation import (CandidateSignals, ExplainedCandidate, Explanation,
                                       IdentityExplanation, RankScore, SignalCounts)
from memory.domain.notes import Note


def explanation(trace: SearchTrace, config: SearchConfig, generation: Generation,
                warnings: Sequence[str], limit: int,
                identity: IdentityExplanation | None = None) -> Explanation:
    query, lists = trace.query, trace.gathered.lists
    return Explanation(
        query=query.text, scope=AppliedScope.of(query.scope), generation=generation,
        no_answer=trace.no_answer, no_answer_reason=trace.no_answer_reason,
        terms=query.features.terms,
        identifiers=query.features.identifiers, fusion=config.fusion.method,
        weights=dict(config.fusion.weights), rrf_k=config.fusion.rrf_k,
        counts=SignalCounts(lexical=len(lists.lexical), semantic=len(lists.semantic),
                            graph=len(lists.graph)),
        candidates=tuple(_candidate(c, trace, rank)
                         for rank, c in enumerate(trace.ranked[:limit], 1)),
        warnings=(*warnings, *trace.warnings), identity=identity)


def _candidate(c: Candidate, trace: SearchTrace, rank: int) -> ExplainedCandidate:
    return ExplainedCandidate(
        rank=rank, memory_id=c.note.memory_id, path=c.note.path,
        citation=f"{c.chunk.path}:L{c.chunk.start_line}-L{c.chunk.end_line}",
        fused=c.fused, bonus=c.bonus, score=c.score,
        signals=CandidateSignals(lexical=RankScore(rank=c.lexical_rank, score=c.lexical_score),
                                 semantic=RankScore(rank=c.semantic_rank, score=c.semantic_score),
                                 graph=RankScore(rank=c.graph_rank, score=c.graph_score)),
        matched_terms=trace.query.features.matched_terms(c.chunk.indexed_text),
        reasons=c.reasons, status=c.note.effective_status.value,
        returned=c in trace.chosen and not trace.no_answer)


def identity_explanation(name: str, note: Note | None, trace: SearchTrace) -> IdentityExplanation:
    """Why the note called `name` (None: no such note) was or was not returned."""
    if note is None:
        return IdentityExplanation(name=name, found=False,
                                   why="no note has this memory_id, path or title")
    known = dict(name=name, found=True, memory_id=note.memory_id, path=note.path,
                 status=note.effective_status.value)
    flt = trace.query.scope.filter
    if not flt.admits(note):
        return IdentityExplanation(**known, why=flt.exclusion(note))
    ranks = [(i, c) for i, c in enumerate(trace.ranked, 1) if c.note.memory_id == note.memory_id]
    returned = not trace.no_answer and any(c.note.memory_id == note.memory_id
                                           for c in trace.chosen)
    if not ranks:
        return IdentityExplanation(**known, why=(
            "in scope, but no signal found it: none of its chunks matched the query words, "
            "was near the query vector, or was close in the graph"))
    rank, best = ranks[0]
    return IdentityExplanation(
        **known, returned=returned, best_rank=rank,
        signals=Signals(lexical=best.lexical_rank, semantic=best.semantic_rank,
                        graph=best.graph_rank),
        matched_terms=trace.query.features.matched_terms(best.chunk.indexed_text),
        why=("returned" if returned else f"no answer: {trace.no_answer_reason}"
             if trace.no_answer else f"ranked {rank}, below the cut-off of the requested limit"))

