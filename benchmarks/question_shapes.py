"""Whether a question asks for several things (a list, a count, a combination).

A benchmark experiment (tune_locomo.py's `spread-*` variants), not part of the search.

Such answers are usually spread over several notes, one piece in each. Spreading the items
of such questions over notes was measured and not taken (docs/benchmarks.md, session 7:
their first five items already come from 4.8 notes on average); nothing in the search calls
this yet, it is here for the next rule that needs the shape. The cues are how English asks
for more than one thing, whatever the subject: a count ("how many", "how often"), a list
("list", "name all", "all the"), a plural after the question word ("what activities",
"which cities", "what kinds of"), a plural subject ("what are", "who were"), several
occasions ("ever", "every time").
"""

from __future__ import annotations

import re

_COUNT = re.compile(r"\bhow\s+(?:many|often)\b|\bnumber\s+of\b", re.I)
_LIST = re.compile(r"\blist\b|\bname\s+(?:all|every|some|the)\b|\ball\s+(?:the|of)\b"
                   r"|\bevery\s+time\b|\beach\s+time\b|\bever\b|\bboth\b", re.I)
_ASKED = re.compile(r"\b(what|which|who)\b((?:\s+[\w'’/-]+)+)", re.I)  # to the clause's end
_PHRASE_WORDS = 5  # the thing asked for is named within this many words
# A question word followed by one of these has reached its verb (or a relative clause's
# subject): what comes after is not the thing asked for. "are" and "were" say the thing
# asked for is plural.
_VERBS = frozenset("""
is was do does did has have had can could would will should might may must am be been
i you he she it we they there
""".split())
_PLURAL_VERBS = frozenset(("are", "were"))
# A plural is the thing asked for when the question's verb (or "of") comes right after it:
# "what books did", "which dashboards should", "what kinds of". Otherwise a word ending
# in "s" is more likely a verb: "what process handles the sync".
_AFTER_THE_THING = _VERBS | _PLURAL_VERBS | frozenset(("of", "that"))
_IRREGULAR_PLURALS = frozenset("""
children people men women feet teeth mice geese data media criteria phenomena
""".split())
# Words ending in "s" that are not plurals (function words, singular nouns, adverbs).
_NOT_PLURAL = frozenset("""
this his hers its ours yours theirs us thus plus yes whereas perhaps always sometimes
news series species means physics mathematics economics politics lens bus gas
""".split())
_NOT_PLURAL_ENDINGS = ("ss", "us", "is", "'s", "’s", "ous")


def asks_for_many(question: str) -> bool:
    """Whether a question asks for several things rather than one."""
    text = question or ""
    return bool(_COUNT.search(text) or _LIST.search(text) or any(
        _plural_asked(m[2]) for m in _ASKED.finditer(text)))


def _plural_asked(after: str) -> bool:
    """Whether the words after a question word, up to its verb, name a plural thing."""
    words = after.lower().split()
    for i, word in enumerate(words[:_PHRASE_WORDS]):
        if word in _PLURAL_VERBS:
            return True
        if _is_verb(word):
            return False
        following = words[i + 1] if i + 1 < len(words) else ""
        if (not following or _is_verb(following) or following in _AFTER_THE_THING) \
                and any(_is_plural(part) for part in word.split("/")):
            return True
    return False


def _is_verb(word: str) -> bool:
    return word in _VERBS or word.endswith(("n't", "n’t"))


def _is_plural(word: str) -> bool:
    if word in _IRREGULAR_PLURALS:
        return True
    return (len(word) > 3 and word.endswith("s") and word.isalpha()
            and word not in _NOT_PLURAL and not word.endswith(_NOT_PLURAL_ENDINGS))
