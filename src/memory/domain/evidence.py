"""The evidence packet: what a search returns, every item citing path, heading and lines."""

from __future__ import annotations

from attrs import field, frozen

from memory.domain.candidates import Candidate
from memory.domain.context import Span
from memory.domain.freshness import Freshness
from memory.domain.scope import ResolvedScope


@frozen(kw_only=True)
class Signals:
    """Rank (1 = best) of an item in each provider's list, or None if absent there."""

    lexical: int | None = None
    semantic: int | None = None
    graph: int | None = None


@frozen(kw_only=True)
class EvidenceItem:
    """One cited span of a note: quote `citation` (path:Lstart-Lend) when relying on it."""

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
    cut_lines: tuple[int, ...] = ()  # lines cut to fit the budget (their text says so)
    date: str | None = None  # the note's date: front matter `created`, else `date`

    @classmethod
    def of(cls, c: Candidate, span: Span, text: str) -> EvidenceItem:
        """The item citing `span` of a candidate's note, with its signals and reasons."""
        return cls(memory_id=c.note.memory_id, path=c.note.path, title=c.note.title,
                   heading=c.chunk.heading, start_line=span.start_line, end_line=span.end_line,
                   text=text, score=c.score,
                   signals=Signals(lexical=c.lexical_rank, semantic=c.semantic_rank,
                                   graph=c.graph_rank),
                   status=c.note.effective_status.value, reasons=c.reasons,
                   date=c.note.created)

    @property
    def citation(self) -> str:
        return f"{self.path}:L{self.start_line}-L{self.end_line}"


@frozen(kw_only=True)
class Generation:
    """The index and graph generations an answer was read from (None: none published)."""

    index: str | None = None
    graph: str | None = None


@frozen(kw_only=True)
class AppliedScope:
    """The scope a search ran under; `inferred` says which filters were defaulted, and from
    where (e.g. the client's workspace root)."""

    status: str = "active"
    root_scope: str | None = None
    repository: str | None = None
    project: str | None = None
    ticket: str | None = None
    path_prefix: str | None = None
    query_tickets: tuple[str, ...] = ()  # ticket ids named in the query (ranking hints)
    inferred: dict[str, str] = field(factory=dict)  # filter name -> where it came from

    @classmethod
    def of(cls, scope: ResolvedScope) -> AppliedScope:
        f = scope.filter
        return cls(status=f.status.value, root_scope=f.root_scope, repository=f.repository,
                   project=f.project, ticket=f.ticket, path_prefix=f.path_prefix,
                   query_tickets=scope.query_tickets, inferred=dict(scope.inferred))

    @property
    def filters(self) -> dict[str, str]:
        """The filters set, by name (status always)."""
        named = {"status": self.status, "root_scope": self.root_scope,
                 "repository": self.repository, "project": self.project, "ticket": self.ticket,
                 "path_prefix": self.path_prefix}
        return {name: value for name, value in named.items() if value}


@frozen(kw_only=True)
class EvidencePacket:
    """What memory_search answers: cited items, or `no_answer` when nothing is about it."""

    query: str
    scope: AppliedScope
    generation: Generation
    no_answer: bool
    items: tuple[EvidenceItem, ...]
    warnings: tuple[str, ...] = ()
    freshness: Freshness = field(default=Freshness.CURRENT, converter=Freshness)
    no_answer_reason: str | None = None  # why, when no_answer
    # Notes near a question memory cannot answer (a secret's value): where it is kept, how
    # it rotates. Never answers: `items` stays empty.
    leads: tuple[EvidenceItem, ...] = ()
