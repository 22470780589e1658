"""The query gate: questions memory cannot answer, judged from the question alone before
anything is ranked: a query with no words, and a question asking for a secret's value."""

from __future__ import annotations

import re
from collections.abc import Sequence

from attrs import frozen

from memory.domain.candidates import Candidate
from memory.domain.secret_questions import judge_secret_question
from memory.domain.secrets import redact_text

NO_WORDS = "the query holds no words to search for (only punctuation or symbols)"
NO_SECRET_VALUES = (
    "memory never holds secret values (notes are redacted, and agents are told not to store "
    "them): ask the secret's owner or the secret manager; any `leads` are notes on where it "
    "is kept or how it rotates, never the value")


@frozen(kw_only=True)
class GateVerdict:
    """What the gate decided: None for no_answer_reason lets the query through."""

    no_answer_reason: str | None = None
    warnings: tuple[str, ...] = ()
    search: bool = True  # False: there is nothing to search for
    leads: int = 0  # how many notes found may follow as leads (never as answers)
    credential: str | None = None  # what a lead must speak of

    def leads_among(self, ranked: Sequence[Candidate]) -> list[Candidate]:
        """The candidates that name the credential asked for: where it is kept, how it
        rotates; a note that does not name it is no lead to it."""
        if not self.leads or not self.credential:
            return []
        words = [re.escape(w) for w in re.split(r"[\s_-]+", self.credential.lower()) if w]
        named = re.compile(r"\b" + r"[\s_-]*".join(words) + r"s?\b")
        return [c for c in ranked if named.search(c.chunk.indexed_text.lower())]


PASS = GateVerdict()


@frozen(kw_only=True)
class QueryGate:
    """The gate step; `secret_questions=False` keeps only the no-words rule."""

    secret_questions: bool = True
    max_leads: int = 3

    def judge(self, query: str) -> GateVerdict:
        if not any(c.isalnum() for c in query):
            return GateVerdict(no_answer_reason=NO_WORDS, search=False)
        if not self.secret_questions:
            return PASS
        asked = judge_secret_question(query)
        if not asked.asks_for_value:
            return PASS
        credential = redact_text(asked.credential or "a credential")
        return GateVerdict(
            no_answer_reason=f"the question asks for the value of a secret ({credential}: "
                             f"{asked.reason}); memory never holds one",
            warnings=(NO_SECRET_VALUES,), leads=self.max_leads, credential=asked.credential)
