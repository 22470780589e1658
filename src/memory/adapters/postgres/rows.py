"""How domain values become Postgres rows and back: notes, chunks, terms, scope filters."""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Sequence

import cattrs
import Stemmer
from psycopg.types.json import Jsonb

from memory.adapters.postgres.seals import KEY_COLUMNS
from memory.domain.note_keys import NoteKeys
from memory.domain.notes import Chunk, Note, Status
from memory.domain.scope import ScopeFilter
from memory.domain.scope_rule import Condition, KeyIs, OwnedBy, PathUnder, StatusIn
from memory.domain.text import STOPWORDS, words
from memory.ports.errors import StoreError

_converter = cattrs.Converter()
# FTS5's tokenizer in the SQLite index is 'porter unicode61 remove_diacritics 2'; Postgres's
# own configurations stem with Snowball and keep accents, so the terms are made here, with
# the same Porter stemmer and folding, and stored as a tsvector of ready lexemes.
_PORTER = Stemmer.Stemmer("porter")
MAX_TERMS = 64
MAX_TERM_CHARS = 200  # a tsvector lexeme holds at most 2 KB; longer runs are not words


def _fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text or "")
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def indexed_terms(text: str) -> Counter:
    """Term frequencies of an indexed text (stopwords count, as in FTS5)."""
    return Counter(t[:MAX_TERM_CHARS] for t in _PORTER.stemWords(words(_fold(text))) if t)


def query_terms(text: str) -> list[str]:
    """Distinct query terms: stopwords dropped unless the query has nothing else."""
    found = words(_fold(text))
    kept = [w for w in found if w not in STOPWORDS] or found
    return list(dict.fromkeys(t[:MAX_TERM_CHARS] for t in _PORTER.stemWords(kept) if t))[:MAX_TERMS]


def tsvector_literal(frequencies: Counter) -> str:
    """A tsvector whose positions count each term's occurrences (ts_rank reads them)."""
    out, position = [], 1
    for term, count in sorted(frequencies.items()):
        spots = ",".join(str(p) for p in range(position, position + min(count, 256)))
        position = min(position + count, 16383)
        quoted = term.replace("\\", "\\\\").replace("'", "''")
        out.append(f"'{quoted}':{spots}")
    return " ".join(out)


def note_values(note: Note, lines: Sequence[str]) -> tuple:
    """The values of a note row, in seals.NOTE_COLUMNS order."""
    keys = NoteKeys.of(note)
    return (note.memory_id, note.path, Jsonb(_converter.unstructure(note)), Jsonb(list(lines)),
            list(keys.names), *(_key_value(getattr(keys, key)) for key in KEY_COLUMNS))


def _key_value(value: object) -> object:
    if isinstance(value, Status):
        return value.value
    return sorted(value) if isinstance(value, frozenset) else value


def note_from(value: dict) -> Note:
    try:
        return _converter.structure(value, Note)
    except (cattrs.BaseValidationError, ValueError, TypeError, KeyError) as exc:
        raise StoreError(f"postgres store is damaged: a note row does not decode: {exc}") from exc


def chunk_json(chunk: Chunk) -> Jsonb:
    return Jsonb(_converter.unstructure(chunk))


def chunk_from(value: dict) -> Chunk:
    try:
        return _converter.structure(value, Chunk)
    except (cattrs.BaseValidationError, ValueError, TypeError, KeyError) as exc:
        raise StoreError(f"postgres store is damaged: a chunk row does not decode: {exc}") from exc


def scope_where(scope: ScopeFilter | None) -> tuple[str, list]:
    """SQL over `aim_notes n` equivalent to scope.admits(note); ("TRUE", []) for all."""
    if scope is None or not scope.conditions:
        return "TRUE", []
    clauses: list[str] = []
    params: list = []
    for condition in scope.conditions:
        clause, values = _rendered(condition)
        clauses.append(clause)
        params.extend(values)
    return " AND ".join(clauses), params


def _rendered(condition: Condition) -> tuple[str, list]:
    """One condition of the domain's scope rule in Postgres's dialect, over NoteKeys' columns."""
    match condition:
        case KeyIs(key=key, value=value):
            return f"n.{KEY_COLUMNS[key]} = %s", [value]
        case OwnedBy(key=key, value=value):
            return f"(n.cross_cutting OR %s = ANY(n.{KEY_COLUMNS[key]}))", [value]
        case PathUnder(prefix=prefix):
            return "left(n.path_key, %s) = %s", [len(prefix), prefix]
        case StatusIn(statuses=statuses):
            return "n.effective_status = ANY(%s)", [[s.value for s in statuses]]
    raise AssertionError(f"a scope condition no store renders: {condition!r}")
