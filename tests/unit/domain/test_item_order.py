"""The order step: the first items are ordered by their best line's match of rare query words."""

from memory.domain.candidates import Candidate, Query
from memory.domain.item_order import LineOrder, best_line_match, term_rarity
from memory.domain.notes import Chunk, Note
from memory.domain.scope import ResolvedScope, ScopeFilter


def candidate(note: str, lines: list[str], score: float) -> Candidate:
    chunk = Chunk.create(memory_id=note, path=f"{note}.md", heading="", start_line=1,
                         end_line=len(lines), text="\n".join(lines))
    return Candidate(chunk=chunk, note=Note(memory_id=note, path=f"{note}.md", title=note),
                     fused=score, lexical_rank=1)


def query(text: str) -> Query:
    return Query.of(text, ResolvedScope(filter=ScopeFilter()))


# Every note names the owner; only one line says what the pager escalates to, and the
# note that ranks first spreads the words over several lines.
SCATTERED = candidate("scattered", ["Mira owns the pager.", "It escalates sometimes.",
                                    "The secondary is rarely needed."], 1.0)
TIGHT = candidate("tight", ["Mira says the pager escalates to the secondary on-call.",
                            "Mira likes tea."], 0.9)
OTHER = candidate("other", ["Mira wrote the release notes."], 0.5)
RANKED = (SCATTERED, TIGHT, OTHER)
Q = query("Where does Mira's pager escalate to the secondary?")


def names(chosen):
    return [c.note.memory_id for c in chosen]


def test_a_line_holding_the_rare_words_together_comes_first():
    assert names(LineOrder(weight=0.25).order(RANKED, RANKED, Q)) == ["tight", "scattered", "other"]


def test_without_weight_the_order_is_the_fused_order():
    assert names(LineOrder(weight=0.0).order(RANKED, RANKED, Q)) == ["scattered", "tight", "other"]


def test_only_the_first_items_are_reordered():
    assert names(LineOrder(weight=0.25, top=1).order(RANKED, RANKED, Q)) == \
        ["scattered", "tight", "other"]


def test_reading_lines_together_lets_scattered_words_count():
    rarity = term_rarity(Q.features, RANKED)
    alone = best_line_match(SCATTERED, Q.features, rarity, window=1)
    together = best_line_match(SCATTERED, Q.features, rarity, window=3)
    assert alone < together == 1.0


def test_a_word_every_candidate_holds_weighs_least():
    rarity = term_rarity(Q.features, RANKED)
    assert rarity["mira"] < rarity["secondary"]
