"""memory_explain's answer: one search's trace taken apart into an Explanation value."""

from __future__ import annotations

from collections.abc import Sequence

from attrs import evolve

from memory.application.search.retrieval import SearchTrace
from memory.application.search.config import SearchConfig
from memory.domain.candidates import Candidate
from memory.domain.evidence import AppliedScope, Generation, Signals
from memory.domain.explanation import (CandidateSignals, ExplainedCandidate, Explanation,
                                       IdentityExplanation, RankScore, SignalCounts)
from memory.domain.notes import Note


def explanation(trace: SearchTrace, returned: Sequence[Candidate], config: SearchConfig,
                generation: Generation, warnings: Sequence[str], limit: int,
                identity: IdentityExplanation | None = None) -> Explanation:
    """`returned`: the candidates the same search returns items for (RetrievalEngine.returned);
    they are listed even when ranked below `limit`, so "returned" counts what search gives."""
    query, lists = trace.query, trace.gathered.lists
    shown = [(rank, c) for rank, c in enumerate(trace.ranked, 1)
             if rank <= limit or c in returned]
    return Explanation(
        query=query.text, scope=AppliedScope.of(query.scope), generation=generation,
        no_answer=trace.no_answer, no_answer_reason=trace.no_answer_reason,
        terms=query.features.terms,
        identifiers=query.features.identifiers, fusion=config.fusion.method,
        weights=dict(config.fusion.weights), rrf_k=config.fusion.rrf_k,
        counts=SignalCounts(lexical=len(lists.lexical), semantic=len(lists.semantic),
                            graph=len(lists.graph)),
        candidates=tuple(_candidate(c, trace, rank, c in returned) for rank, c in shown),
        warnings=(*warnings, *trace.warnings), identity=identity)


def _candidate(c: Candidate, trace: SearchTrace, rank: int,
               returned: bool) -> ExplainedCandidate:
    return ExplainedCandidate(
        rank=rank, memory_id=c.note.memory_id, path=c.note.path,
        citation=f"{c.chunk.path}:L{c.chunk.start_line}-L{c.chunk.end_line}",
        fused=c.fused, bonus=c.bonus, score=c.score,
        signals=CandidateSignals(lexical=RankScore(rank=c.lexical_rank, score=c.lexical_score),
                                 semantic=RankScore(rank=c.semantic_rank, score=c.semantic_score),
                                 graph=RankScore(rank=c.graph_rank, score=c.graph_score)),
        matched_terms=trace.query.features.matched_terms(c.chunk.indexed_text),
        reasons=c.reasons, status=c.note.effective_status.value,
        returned=returned)


def identity_explanation(name: str, note: Note | None, trace: SearchTrace,
                         returned_by: Sequence[Candidate]) -> IdentityExplanation:
    """Why the note called `name` (None: no such note) was or was not returned."""
    if note is None:
        return IdentityExplanation(name=name, found=False,
                                   why="no note has this memory_id, path or title")
    known = IdentityExplanation(name=name, found=True, why="", memory_id=note.memory_id,
                                path=note.path, status=note.effective_status.value)
    flt = trace.query.scope.filter
    if not flt.admits(note):
        return evolve(known, why=flt.exclusion(note) or "")
    ranks = [(i, c) for i, c in enumerate(trace.ranked, 1) if c.note.memory_id == note.memory_id]
    returned = any(c.note.memory_id == note.memory_id for c in returned_by)
    if not ranks:
        return evolve(known, why=(
            "in scope, but no signal found it: none of its chunks matched the query words, "
            "was near the query vector, or was close in the graph"))
    rank, best = ranks[0]
    return evolve(
        known, returned=returned, best_rank=rank,
        signals=Signals(lexical=best.lexical_rank, semantic=best.semantic_rank,
                        graph=best.graph_rank),
        matched_terms=trace.query.features.matched_terms(best.chunk.indexed_text),
        why=("returned" if returned else f"no answer: {trace.no_answer_reason}"
             if trace.no_answer else f"ranked {rank}, below the cut-off of the requested limit"))

