"""SQL shared by readers and stages: safe FTS5 queries, scope filters, bm25 and KNN."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence

import apsw
import numpy as np

from memory.adapters.sqlite.rows import CHUNK_COLUMNS, KEY_COLUMNS, IndexDamaged, chunk_from_row
from memory.domain.notes import Chunk
from memory.domain.scope import ScopeFilter
from memory.domain.scope_rule import Condition, KeyIs, OwnedBy, PathUnder, StatusIn
from memory.domain.text import STOPWORDS, words
from memory.ports.errors import StoreError

MAX_TERMS = 64
MAX_K = 4096  # sqlite-vec refuses larger k
LEXICAL_HEAD = 200  # FTS5 matches ranked before the scope is judged
# A head too shallow for a narrow scope is ranked again this many times deeper before the
# full join: FTS5 alone ranks 2,000 of 13k matches in 11 ms (200: 8 ms), where the join
# judges the scope of every match in SQL (35 ms at 10k notes for one repository's scope).
LEXICAL_DEEPER = 10
# A run of word characters joined by identifier punctuation: ALPHA-142, a/b.vbs, snake_case.
_TOKEN = re.compile(r"[\w.\-/\\:]+")
_MARKS = frozenset("-./_\\:")


def fts_query(text: str) -> str | None:
    """An FTS5 MATCH expression built only from quoted words, so no input is syntax.

    Terms are OR-ed so bm25 rewards chunks that hold more (and rarer) of them; each
    identifier-like token adds its parts as a phrase so `ALPHA-142` outranks `alpha`.
    """
    terms = words(text)
    kept = [t for t in terms if t not in STOPWORDS] or terms
    phrases = []
    for token in _TOKEN.findall(text or ""):
        parts = words(token)
        if len(parts) > 1 and (any(c in _MARKS for c in token) or any(c.isdigit() for c in token)):
            phrases.append(" ".join(parts))
    items = list(dict.fromkeys(kept))[:MAX_TERMS] + list(dict.fromkeys(phrases))[:MAX_TERMS]
    if not items:
        return None
    return " OR ".join('"' + item.replace('"', '""') + '"' for item in items)


def scope_where(scope: ScopeFilter | None) -> tuple[str, list]:
    """SQL over `notes n` equivalent to scope.admits(note); ("", []) when it admits all."""
    if scope is None:
        return "", []
    clauses: list[str] = []
    params: list = []
    for condition in scope.conditions:
        clause, values = _rendered(condition)
        clauses.append(clause)
        params.extend(values)
    return " AND ".join(clauses), params


def _rendered(condition: Condition) -> tuple[str, list]:
    """One condition of the domain's scope rule in SQLite's dialect, over NoteKeys' columns."""
    match condition:
        case KeyIs(key=key, value=value):
            return f"n.{KEY_COLUMNS[key]} = ?", [value]
        case OwnedBy(key=key, value=value):
            return (f"(n.cross_cutting = 1 OR EXISTS "
                    f"(SELECT 1 FROM json_each(n.{KEY_COLUMNS[key]}) WHERE value = ?))", [value])
        case PathUnder(prefix=prefix):
            # substr compares exactly, so % and _ in a prefix need no LIKE escaping.
            return "substr(n.path_key, 1, ?) = ?", [len(prefix), prefix]
        case StatusIn(statuses=statuses):
            if not statuses:
                return "0", []
            return (f"n.effective_status IN ({', '.join('?' * len(statuses))})",
                    [s.value for s in statuses])
    raise AssertionError(f"a scope condition no store renders: {condition!r}")


Fetch = Callable[[Sequence[tuple[int, float]]], list[tuple[Chunk, float]]]


def lexical(conn: apsw.Connection, query: str, scope: ScopeFilter | None, limit: int,
            admitted: Callable[[list[int]], set[int] | None] | None = None,
            fetch: Fetch | None = None) -> list[tuple[Chunk, float]]:
    """Chunks matching the query's words among admitted notes, best bm25 first.

    FTS5 ranks its matches alone first (a few ms even for thousands of matches); the
    scope is judged on that head only. When the head holds `limit` admitted chunks they
    are exactly the best `limit` admitted ones; otherwise (a narrow scope) a deeper head
    is judged the same way when `admitted` can judge it, and last the full query joins
    every match to its note. `admitted` may judge the head's rowids without
    SQL (it returns None when it cannot); `fetch` turns (rowid, score) pairs into chunks
    (a reader's cache; chunks_by_rowid by default).
    """
    match = fts_query(query)
    if match is None or limit <= 0:
        return []
    where, params = scope_where(scope)
    head_size = max(LEXICAL_HEAD, 4 * int(limit))
    for size in (head_size, head_size * LEXICAL_DEEPER):
        head = conn.execute("SELECT rowid, bm25(chunk_fts) AS score FROM chunk_fts "
                            "WHERE chunk_fts MATCH ? ORDER BY score, rowid LIMIT ?",
                            (match, size)).fetchall()
        rowids = [rowid for rowid, _ in head]
        judged = admitted(rowids) if admitted is not None and where else None
        deeper = judged is not None  # judged without SQL: a deeper head is cheap to judge
        if judged is None:
            judged = _admitted_chunks(conn, rowids, where, params)
        kept = [(rowid, -score) for rowid, score in head if rowid in judged][:int(limit)]
        if len(kept) == int(limit) or len(head) < size:
            return (fetch or (lambda pairs: chunks_by_rowid(conn, pairs)))(kept)
        if not deeper:
            break
    sql = (f"SELECT {CHUNK_COLUMNS}, bm25(chunk_fts) AS bm25 FROM chunk_fts "
           f"JOIN chunks c ON c.rowid = chunk_fts.rowid "
           f"JOIN notes n ON n.memory_id = c.memory_id "
           f"WHERE chunk_fts MATCH ? {'AND ' + where if where else ''} "
           f"ORDER BY bm25, c.rowid LIMIT ?")
    rows = conn.execute(sql, [match, *params, int(limit)]).fetchall()
    return [(chunk_from_row(row[:-1]), -row[-1]) for row in rows]


def _admitted_chunks(conn: apsw.Connection, rowids: list[int], where: str,
                     params: list) -> set[int]:
    if not where or not rowids:
        return set(rowids)
    sql = (f"SELECT c.rowid FROM chunks c JOIN notes n ON n.memory_id = c.memory_id "
           f"WHERE c.rowid IN (SELECT value FROM json_each(?)) AND {where}")
    return {row[0] for row in conn.execute(sql, [json.dumps(rowids), *params])}


def chunk_rows(conn: apsw.Connection, rowids: Sequence[int]) -> dict[int, Chunk]:
    """The chunks these rowids name (those that exist), each checked against its CRC."""
    if not rowids:
        return {}
    sql = (f"SELECT c.rowid, {CHUNK_COLUMNS} FROM chunks c "
           f"WHERE c.rowid IN (SELECT value FROM json_each(?))")
    return {row[0]: chunk_from_row(row[1:])
            for row in conn.execute(sql, (json.dumps(list(rowids)),))}


def chunks_by_rowid(conn: apsw.Connection,
                    scored: Sequence[tuple[int, float]]) -> list[tuple[Chunk, float]]:
    """The chunks of (rowid, score) pairs, in the order given."""
    found = chunk_rows(conn, [rowid for rowid, _ in scored])
    return [(found[rowid], score) for rowid, score in scored if rowid in found]


def as_blob(vector: Sequence[float], dimension: int | None = None) -> bytes:
    """float32 bytes of one vector, refusing wrong lengths and non-finite values."""
    array = np.asarray(vector, dtype=np.float32)
    if array.ndim != 1 or array.size == 0:
        raise StoreError(f"a vector must be a flat non-empty sequence, got shape {array.shape}")
    if dimension is not None and array.size != dimension:
        raise StoreError(f"vector has {array.size} dimensions, the index has {dimension}")
    if not np.isfinite(array).all():
        raise StoreError("vector holds NaN or infinite values")
    return array.tobytes()


def nearest(conn: apsw.Connection, vector: Sequence[float], scope: ScopeFilter | None,
            limit: int, dimension: int | None) -> list[tuple[Chunk, float]]:
    """Chunks closest by cosine among admitted notes, with similarity = 1 - distance.

    sqlite-vec's distance over every admitted row (brute force, as the in-memory matrix;
    used before that matrix is loaded and by a stage's self-check).
    """
    if limit <= 0 or not dimension:
        return []
    blob = as_blob(vector, dimension)
    where, params = scope_where(scope)
    # CROSS JOIN keeps notes outermost: the scope is judged once per note, not per chunk.
    restrict = (f"WHERE v.rowid IN (SELECT c.rowid FROM notes n CROSS JOIN chunks c "
                f"ON c.memory_id = n.memory_id WHERE {where})") if where else ""
    sql = (f"WITH knn AS (SELECT v.rowid, vec_distance_cosine(v.embedding, ?) AS distance "
           f"FROM chunk_vectors v {restrict} ORDER BY distance, v.rowid LIMIT ?) "
           f"SELECT {CHUNK_COLUMNS}, knn.distance FROM knn JOIN chunks c ON c.rowid = knn.rowid "
           f"ORDER BY knn.distance, c.rowid")
    try:
        rows = conn.execute(sql, [blob, *params, min(int(limit), MAX_K)]).fetchall()
    except apsw.SQLError as exc:
        # The statement is fixed and the query vector checked: what fails is a stored one.
        raise IndexDamaged(f"index file is damaged: a stored vector is unreadable: {exc}") from exc
    return [(chunk_from_row(row[:-1]), 1.0 - row[-1]) for row in rows]
