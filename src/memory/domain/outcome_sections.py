"""The outcome step: in the notes a search ranks first, the section that states the outcome
(Decision, Resolution, Fix, ...) follows the note's best match."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from attrs import field, frozen

from memory.domain.candidates import Candidate
from memory.domain.notes import Chunk

# First word (or two) of a heading whose section states what was decided, found or done.
# Decision records (Decision, Decision Outcome), runbooks and post-mortems (Resolution, Root
# Cause, Fix, Workaround, Solution) and summaries (Summary, Conclusion, TL;DR, Answer).
OUTCOME_WORDS = frozenset(("decision", "decisions", "outcome", "resolution", "root cause",
                           "conclusion", "conclusions", "summary", "tl;dr", "answer", "fix",
                           "workaround", "solution"))
_WORD = re.compile(r"[^\W\d_]+(?:;[^\W\d_]+)?")


@frozen(kw_only=True)
class OutcomeSections:
    """Moves one candidate under an outcome heading to just after its note's best candidate,
    at that candidate's score, for each of the first `top` notes of the ranking whose best
    candidate is not an outcome section already: the best-ranked such candidate, else the
    note's first outcome chunk.

    The short section that names a decision shares few words with the question, while the
    long sections around it (context, consequences) share many, so it ranks below them and
    often out of the first items. Notes keep their order: only where a note's outcome
    section stands among that note's candidates changes. Measured on the frozen, engineering
    and decision-record benchmarks (docs/benchmarks.md, session 8): EH@5 gains on all three,
    MRR@10 unchanged; the first three notes, not five (five moved an answer down).
    """

    top: int = 3
    window: int = 50  # only the top of the ranking is considered
    words: frozenset[str] = field(default=OUTCOME_WORDS)
    # A heading is an outcome heading when it starts with one of the words and is short
    # ("Decision", "Decision Outcome", "3. Resolution"), not a title that holds the word
    # ("Architecture Decision Record 15: EKS worker node AMI").
    max_heading_words: int = 3

    def states_outcome(self, heading: str) -> bool:
        """Whether the innermost heading of a chunk's heading path names an outcome."""
        last = heading.rsplit(" > ", 1)[-1]
        found = _WORD.findall(last.lower())
        return 0 < len(found) <= self.max_heading_words and (
            found[0] in self.words or " ".join(found[:2]) in self.words)

    def leading(self, ranked: Sequence[Candidate]) -> tuple[str, ...]:
        """The memory_ids of the first `top` notes of the ranking."""
        return tuple(dict.fromkeys(c.note.memory_id for c in ranked[:self.window]))[:self.top]

    def lift(self, ranked: Sequence[Candidate],
             sections: Mapping[str, Sequence[Chunk]] | None = None) -> tuple[Candidate, ...]:
        """`sections`: the leading notes' chunks, so an outcome section no provider list
        returned (it shares no word with the question, and in a big root its vector is not
        among the nearest) still follows its note's best candidate."""
        head, rest = list(ranked[:self.window]), ranked[self.window:]
        best: dict[str, Candidate] = {}
        for c in head:
            best.setdefault(c.note.memory_id, c)
        # A note whose best match is its outcome section already leads with it.
        leading = {n for n in list(best)[:self.top]
                   if not self.states_outcome(best[n].chunk.heading)}
        # One section per note: a Decision section of several chunks must not push the
        # other notes out of the first items.
        moved: dict[str, Candidate] = {}
        for c in head:
            note = c.note.memory_id
            if note in leading and note not in moved and self.states_outcome(c.chunk.heading):
                moved[note] = c  # the best-ranked of the note's outcome chunks
        shown = {c.chunk.chunk_id for c in head}
        for note, chunks in (sections or {}).items():
            first = next((ch for ch in chunks if self.states_outcome(ch.heading)), None)
            if note in leading and note not in moved and first is not None \
                    and first.chunk_id not in shown:
                moved[note] = Candidate(chunk=first, note=best[note].note)
        if not moved:
            return tuple(ranked)
        lifted = {id(m) for m in moved.values()}
        taken = {m.chunk.chunk_id for m in moved.values()}
        rest = [c for c in rest if c.chunk.chunk_id not in taken]  # one read past the window
        out: list[Candidate] = []
        for c in head:
            if id(c) in lifted:
                continue
            out.append(c)
            m = moved.get(c.note.memory_id)
            if m is not None and c is best[c.note.memory_id]:
                out.append(m.with_bonus(c.score - m.score, "outcome-section"))
        return (*out, *rest)
