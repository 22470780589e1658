"""SQL that ranks chunks of one generation: bm25 over stored lexemes, cosine over pgvector."""

from __future__ import annotations

import math
from collections.abc import Sequence

import psycopg

from memory.adapters.postgres.rows import chunk_from, note_from, query_terms, scope_where
from memory.adapters.postgres.seals import CHUNK_SOUND, NOTE_SOUND, checked
from memory.domain.candidates import Hit
from memory.domain.scope import ScopeFilter
from memory.ports.errors import StoreError

K1, B = 1.2, 0.75  # FTS5's bm25 constants
HEAD = 200  # nearest neighbours asked of HNSW before the scope is judged
# Tuples an iterative HNSW scan may visit, per chunk asked for (at least MIN_SCAN_TUPLES):
# enough for a scope that admits 5 % of the chunks; a narrower one costs this much before
# the exact scan answers it.
SCAN_TUPLES_PER_HIT, MIN_SCAN_TUPLES = 20, 1000
MAX_K = 4096

_MEMBERS = ("aim_chunks c JOIN aim_members mem ON mem.note_row = c.note_row AND mem.gen = %s "
            "JOIN aim_notes n ON n.row = c.note_row")

# bm25 as FTS5 computes it: the idf of each term over every chunk of the generation (not
# only those the scope admits), its frequency in the chunk and the chunk's length.
_BM25 = f"""
WITH stats AS (
  SELECT count(*)::float8 AS n, greatest(avg(c.length), 1)::float8 AS avg
  FROM aim_chunks c JOIN aim_members mem ON mem.note_row = c.note_row AND mem.gen = %(gen)s),
matched AS (
  SELECT c.row, c.length, c.tsv, ({{where}}) AS admitted FROM {_MEMBERS.replace('%s', '%(gen)s')}
  WHERE c.tsv @@ %(query)s::tsquery),
terms AS (
  SELECT m.row, m.length, m.admitted, u.lexeme, coalesce(array_length(u.positions, 1), 1) AS tf
  FROM matched m, unnest(m.tsv) u WHERE u.lexeme = ANY(%(terms)s)),
df AS (SELECT lexeme, count(*)::float8 AS df FROM terms GROUP BY lexeme)
SELECT t.row, sum(ln(1 + (s.n - df.df + 0.5) / (df.df + 0.5)) * t.tf * {K1 + 1}
                  / (t.tf + {K1} * (1 - {B} + {B} * t.length / s.avg))) AS score
FROM terms t JOIN df USING (lexeme) CROSS JOIN stats s WHERE t.admitted
GROUP BY t.row ORDER BY score DESC, t.row LIMIT %(limit)s
"""


def tsquery(terms: Sequence[str]) -> str:
    return " | ".join("'" + t.replace("\\", "\\\\").replace("'", "''") + "'" for t in terms)


def lexical(conn: psycopg.Connection, gen: str, query: str, scope: ScopeFilter | None,
            limit: int) -> list[Hit]:
    terms = query_terms(query)
    if not terms or limit <= 0:
        return []
    where, params = scope_where(scope)
    named = {f"p{i}": value for i, value in enumerate(params)}
    where = _named(where, len(params))
    rows = conn.execute(_BM25.format(where=where),
                        {"gen": gen, "query": tsquery(terms), "terms": terms,
                         "limit": int(limit), **named}).fetchall()
    return _hits(conn, gen, [(row, score) for row, score in rows])


def nearest(conn: psycopg.Connection, gen: str, vector: Sequence[float],
            scope: ScopeFilter | None, limit: int, dimension: int | None) -> list[Hit]:
    """Nearest chunks by cosine; the HNSW index first, scanned on until `limit` chunks pass
    the scope (pgvector's iterative scan), then an exact scan when it gave up first: a scope
    narrower than the scan's bound, or one holding fewer than `limit` chunks."""
    if limit <= 0 or not dimension:
        return []
    literal = vector_literal(vector, dimension)
    limit = min(int(limit), MAX_K)
    where, params = scope_where(scope)
    found = _knn(conn, gen, literal, dimension, where, params, limit, indexed=True)
    if len(found) < limit:
        found = _knn(conn, gen, literal, dimension, where, params, limit, indexed=False)
    return _hits(conn, gen, found)


def _knn(conn, gen, literal, dimension, where, params, limit, *, indexed):
    d = int(dimension)
    column = f"c.embedding::vector({d})" if indexed else "c.embedding"
    sql = (f"SELECT c.row, 1 - ({column} <=> %s::vector({d})) AS similarity FROM {_MEMBERS} "
           f"WHERE c.dim = {d} AND {where} ORDER BY {column} <=> %s::vector({d}), c.row "
           f"LIMIT %s")
    with conn.transaction():
        for setting in _index_settings(limit) if indexed else ():
            conn.execute(setting)
        return conn.execute(sql, [literal, gen, *params, literal, limit]).fetchall()


def _index_settings(limit: int) -> tuple[str, ...]:
    """How the indexed query reads HNSW. Every query is filtered (by the generation's
    members at least), and the planner prices the filtered index scan above a sort of every
    admitted chunk, so sorting is switched off for this one query: the index's order (by
    distance; equal distances then sorted by row) is the plan. strict_order keeps that order
    exact while the scan goes on past ef_search for a scope that drops candidates; the bound
    on tuples lets a scope too narrow for it (fewer than ~limit/SCAN_TUPLES_PER_HIT of the
    chunks) fall to the exact scan after a short try."""
    tuples = max(MIN_SCAN_TUPLES, SCAN_TUPLES_PER_HIT * limit)
    return (f"SET LOCAL hnsw.ef_search = {max(40, min(1000, max(HEAD, 4 * limit)))}",
            "SET LOCAL hnsw.iterative_scan = strict_order",
            f"SET LOCAL hnsw.max_scan_tuples = {tuples}", "SET LOCAL enable_sort = off")


def vector_literal(vector: Sequence[float], dimension: int | None = None) -> str:
    """pgvector's text form of one vector, refusing wrong lengths and non-finite values."""
    values = [float(x) for x in vector]
    if not values:
        raise StoreError("a vector must be a flat non-empty sequence")
    if dimension is not None and len(values) != dimension:
        raise StoreError(f"vector has {len(values)} dimensions, the index has {dimension}")
    if not all(math.isfinite(x) for x in values):
        raise StoreError("vector holds NaN or infinite values")
    return "[" + ",".join(repr(x) for x in values) + "]"


def _hits(conn: psycopg.Connection, gen: str, scored: list[tuple[int, float]]) -> list[Hit]:
    """The hits, each row checked against its seal first (a changed row never answers)."""
    if not scored:
        return []
    rows = conn.execute(f"SELECT c.row, c.chunk, n.note, {CHUNK_SOUND} AND {NOTE_SOUND} "
                        f"FROM aim_chunks c JOIN aim_notes n ON n.row = c.note_row "
                        f"WHERE c.row = ANY(%s)", ([row for row, _ in scored],)).fetchall()
    for *_, is_sound in rows:
        checked(is_sound, "a chunk or note row found by a search", gen)
    found = {row: (chunk, note) for row, chunk, note, _ in rows}
    return [Hit(chunk_from(found[row][0]), note_from(found[row][1]), float(score))
            for row, score in scored if row in found]


def _named(where: str, count: int) -> str:
    """scope_where's positional %s as the named parameters p0, p1, ..."""
    for i in range(count):
        where = where.replace("%s", f"%(p{i})s", 1)
    return where
