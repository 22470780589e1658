"""Query terms matched in text: exact words, and inflections by a shared stem."""

from hypothesis import given, strategies as st

from memory.domain.text import QueryFeatures, words

WORDS = st.text(alphabet="abcdeinrsty", min_size=1, max_size=9)


def _spelled_out(terms: tuple[str, ...], text: str) -> tuple[str, ...]:
    """The rule as written down: a term is present, or (four letters or more) some word
    starts with its stem, the term less up to three letters and never under four."""
    present = set(words(text))
    return tuple(t for t in terms if t in present or (
        len(t) >= 4 and any(w.startswith(t[: max(4, len(t) - 3)]) for w in present)))


def test_an_inflected_word_matches_and_a_short_term_must_be_exact():
    features = QueryFeatures.of("retries webhooks api")
    assert features.matched_terms("We retry the webhook; apis differ") == ("retries", "webhooks")


def test_a_stem_matches_wherever_its_words_sort_among_the_others():
    features = QueryFeatures.of("indexing")
    for text in ("index", "aaa index zzz", "indew indexes", "indexzzz abc", "inde"):
        assert features.matched_terms(text) == _spelled_out(features.terms, text)


@given(st.lists(WORDS, min_size=1, max_size=4), st.lists(WORDS, max_size=12))
def test_matched_terms_follow_the_rule(query, text_words):
    features = QueryFeatures.of(" ".join(query))
    text = " ".join(text_words)
    assert features.matched_terms(text) == _spelled_out(features.terms, text)
