"""The evidence packet: what a search returns, every item citing path, heading and lines."""

from __future__ import annotations

from attrs import frozen

from memory.domain.candidates import Candidate
from memory.domain.context import Span


@frozen(kw_only=True)
class Signals:
    """Rank (1 = best) of an item in each provider's list, or None if absent there."""

    lexical: int | None = None
    semantic: int | None = None
    graph: int | None = None

    def as_dict(self) -> dict:
        return {"lexical": self.lexical, "semantic": self.semantic, "graph": self.graph}


@frozen(kw_only=True)
class EvidenceItem:
    memory_id: str
    path: str
    title: str
    heading: str
    start_line: int
    end_line: int
    text: str
    score: float
    signals: Signals
    status: str
    reasons: tuple[str, ...] = ()

    @classmethod
    def of(cls, c: Candidate, span: Span, text: str) -> EvidenceItem:
        """The item citing `span` of a candidate's note, with its signals and reasons."""
        return cls(memory_id=c.note.memory_id, path=c.note.path, title=c.note.title,
                   heading=c.chunk.heading, start_line=span.start_line, end_line=span.end_line,
                   text=text, score=c.score,
                   signals=Signals(lexical=c.lexical_rank, semantic=c.semantic_rank,
                                   graph=c.graph_rank),
                   status=c.note.effective_status.value, reasons=c.reasons)

    @property
    def citation(self) -> str:
        return f"{self.path}:L{self.start_line}-L{self.end_line}"

    def as_dict(self) -> dict:
        return {
            "memory_id": self.memory_id, "path": self.path, "title": self.title,
            "heading": self.heading, "start_line": self.start_line, "end_line": self.end_line,
            "citation": self.citation, "text": self.text, "score": round(self.score, 6),
            "signals": self.signals.as_dict(), "status": self.status,
            "reasons": list(self.reasons),
        }


@frozen(kw_only=True)
class Generation:
    index: str | None = None
    graph: str | None = None

    def as_dict(self) -> dict:
        return {"index": self.index, "graph": self.graph}


@frozen(kw_only=True)
class EvidencePacket:
    query: str
    scope: dict
    generation: Generation
    no_answer: bool
    items: tuple[EvidenceItem, ...]
    warnings: tuple[str, ...] = ()
    freshness: str = "current"  # current | refreshed-before-search | stale

    def as_dict(self) -> dict:
        return {
            "query": self.query, "scope": self.scope, "generation": self.generation.as_dict(),
            "no_answer": self.no_answer, "items": [i.as_dict() for i in self.items],
            "warnings": list(self.warnings), "freshness": self.freshness,
        }
