"""Query text analysis shared by ranking rules: terms, identifiers, paths, error strings."""

from __future__ import annotations

import re
from bisect import bisect_left
from functools import lru_cache

from attrs import frozen

WORD = re.compile(r"[^\W_]+", re.UNICODE)
# Tokens that look like identifiers: contain a digit, dash, dot, slash or underscore
# inside, or mixed case (CamelCase); these must be matched exactly, not paraphrased.
IDENTIFIER = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-/\\:]*[A-Za-z0-9_]")
QUOTED = re.compile(r"\"([^\"]{3,})\"|'([^']{6,})'|`([^`]{2,})`")
PATH_LIKE = re.compile(r"(?:[\w.\-]+/)+[\w.\-]+|[\w\-]+\.(?:md|py|js|ts|vbs|ps1|sh|json|toml|ya?ml|txt|cfg|ini|go|rs|java|cs)\b")

STOPWORDS = frozenset("""
a about above after again against all am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further
had has have having he her here hers herself him himself his how i if in into is it its itself
just me more most my myself no nor not now of off on once only or other our ours ourselves out
over own same she should so some such than that the their theirs them themselves then there
these they this those through to too under until up very was we were what when where which
while who whom why will with would you your yours yourself yourselves did does done get got
ever also yet may might must shall us let lets
""".split())


def words(text: str) -> list[str]:
    """Lower-cased word tokens (letters and digits), in order."""
    return [w.lower() for w in WORD.findall(text or "")]


def content_terms(text: str) -> tuple[str, ...]:
    """Distinct words that carry meaning: no stopwords, no single letters."""
    return tuple(dict.fromkeys(w for w in words(text) if w not in STOPWORDS and len(w) > 1))


def _looks_like_identifier(token: str) -> bool:
    inner = token[1:-1]
    has_mark = any(c in inner for c in "-_./\\:") or any(c.isdigit() for c in token)
    camel = any(c.isupper() for c in token[1:]) and any(c.islower() for c in token)
    return (has_mark or camel) and any(c.isalpha() for c in token) and len(token) >= 3


NAME_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9_.\-/]*[A-Za-z0-9]|[A-Z]")
# Capitalised, but the calendar's words: they bound a question in time, they name nothing.
CALENDAR = frozenset("""
january february march april may june july august september october november december
jan feb mar apr jun jul aug sep sept oct nov dec
monday tuesday wednesday thursday friday saturday sunday
""".split())


def _proper_names(query: str) -> tuple[str, ...]:
    """Capitalised words past the first one (Kafka, iOS, Elasticsearch): named things."""
    tokens = NAME_TOKEN.findall(query)
    names = [t for i, t in enumerate(tokens)
             if i > 0 and t != "I" and t.lower() not in CALENDAR
             and (t[0].isupper() or any(c.isupper() for c in t[1:]))]
    return tuple(dict.fromkeys(names))


@frozen
class QueryFeatures:
    """What a query asks for exactly, beyond its words."""

    terms: tuple[str, ...]
    identifiers: tuple[str, ...]
    paths: tuple[str, ...]
    phrases: tuple[str, ...]
    names: tuple[str, ...] = ()  # proper names and identifiers: things memory must know

    @classmethod
    def of(cls, query: str) -> QueryFeatures:
        query = query or ""
        phrases = tuple(dict.fromkeys(
            next(g for g in m.groups() if g).strip() for m in QUOTED.finditer(query)))
        identifiers = tuple(dict.fromkeys(
            t.strip(".:") for t in IDENTIFIER.findall(query) if _looks_like_identifier(t.strip(".:"))))
        paths = tuple(dict.fromkeys(PATH_LIKE.findall(query)))
        names = tuple(dict.fromkeys((*_proper_names(query), *identifiers)))
        return cls(terms=content_terms(query), identifiers=identifiers, paths=paths,
                   phrases=phrases, names=names)

    def matched_terms(self, text: str) -> tuple[str, ...]:
        """Query terms present in text, allowing simple inflections (retry ~ retries)."""
        return _matched(self.terms, text or "")

    def coverage(self, text: str) -> float:
        if not self.terms:
            return 0.0
        return len(self.matched_terms(text)) / len(self.terms)


@lru_cache(maxsize=4096)  # one search judges the same chunk texts in several steps
def _matched(terms: tuple[str, ...], text: str) -> tuple[str, ...]:
    present, ordered = _words_in(text)
    return tuple(t for t in terms if t in present or _inflected(t, ordered))


@lru_cache(maxsize=4096)  # and other searches judge them again, with other terms
def _words_in(text: str) -> tuple[frozenset[str], tuple[str, ...]]:
    present = frozenset(words(text))
    return present, tuple(sorted(present))


def _inflected(term: str, ordered: tuple[str, ...]) -> bool:
    """Whether a word of `ordered` (sorted) starts with the term's stem: the words that do
    sort together, from where the stem itself would go."""
    if len(term) < 4:
        return False
    stem = term[: max(4, len(term) - 3)]
    at = bisect_left(ordered, stem)
    return at < len(ordered) and ordered[at].startswith(stem)


def mentions_name(haystack: str, name: str, exact: bool = False) -> bool:
    """Whether text mentions a name the query used: exactly, or for a plain word of five
    letters or more, in another form of it (Johns's ~ John, European ~ Europe). An
    identifier (`exact`) must appear as written."""
    if contains_exact(haystack, name):
        return True
    if exact or not name.isalpha() or len(name) < 5:
        return False
    stem = name.lower()[: max(4, len(name) - 2)]
    return any(w.startswith(stem) for w in set(words(haystack)))


def contains_exact(haystack: str, needle: str) -> bool:
    """Case-insensitive containment of an identifier or phrase, collapsing whitespace."""
    if not needle:
        return False
    norm = " ".join(haystack.split()).lower()
    return " ".join(needle.split()).lower() in norm
