"""The feedback receipt: one rating of a search result, as recorded in the local log."""

from __future__ import annotations

from attrs import frozen

from memory.domain.evidence import Generation

RELEVANCE = ("relevant", "irrelevant", "missing")


@frozen(kw_only=True)
class FeedbackReceipt:
    """A rating appended to the feedback log (no note is changed)."""

    recorded: bool
    time: str
    query: str
    memory_id: str
    path: str
    relevance: str  # one of RELEVANCE
    note: str
    generation: Generation
