"""MemoryService: the eight operations agents call, with validation and policy."""

from __future__ import annotations

import copy
from collections.abc import Callable
from datetime import datetime, timezone
from typing import TypeVar

from memory.application.indexer import Indexer, Progress
from memory.application.requests import (MAX_DEPTH, MAX_NAME_CHARS, MAX_NOTE_CHARS,
                                         MAX_QUERY_CHARS, SearchRequest, bounded_int, clean_text)
from memory.application.retrieval import RetrievalEngine
from memory.application.search_config import SearchConfig
from memory.domain.errors import InvalidRequest, NotFound, Unavailable
from memory.domain.evidence import EvidencePacket, Generation
from memory.domain.notes import Note
from memory.domain.refresh import RefreshReport, diff_scan
from memory.domain.scope import ScopeFilter, StatusFilter
from memory.domain.secrets import redact_data, redact_lines, redact_text
from memory.ports.chunk_store import ChunkStore
from memory.ports.clock import Clock
from memory.ports.embedder import Embedder
from memory.ports.graph_generations import GraphGenerations
from memory.ports.graph_provider import GraphProvider
from memory.ports.index_generations import IndexGenerations
from memory.ports.journal import FeedbackLog, RefreshHistory
from memory.ports.note_source import NoteSource

RELEVANCE = ("relevant", "irrelevant", "missing")
MAX_GET_LINES = 2000
READ_ATTEMPTS = 5  # of a search that keeps seeing new generations published
T = TypeVar("T")


class MemoryService:
    """Policy around retrieval and refresh: validate, pick the generation, shape answers."""

    def __init__(self, *, engine: RetrievalEngine, indexer: Indexer, source: NoteSource,
                 chunks: ChunkStore, index: IndexGenerations, graph: GraphProvider | None,
                 graphs: GraphGenerations | None, embedder: Embedder, feedback: FeedbackLog,
                 history: RefreshHistory, clock: Clock,
                 before_search: Callable[[], tuple[str, tuple[str, ...]]] | None = None):
        self.engine = engine
        self._indexer = indexer
        self._source = source
        self._chunks = chunks
        self._index = index
        self._graph = graph
        self._graphs = graphs
        self._embedder = embedder
        self._feedback = feedback
        self._history = history
        self._clock = clock
        self._before_search = before_search

    def with_search_config(self, config: SearchConfig) -> MemoryService:
        """This service searching under another configuration (benchmarks, ablations)."""
        clone = copy.copy(self)
        clone.engine = self.engine.with_config(config)
        return clone

    # -- reading -------------------------------------------------------------------------

    def search(self, query, **filters) -> EvidencePacket:
        request = SearchRequest.parse(query, **filters)
        freshness, extra = self._before_search() if self._before_search else ("current", ())
        return self._from_one_generation(lambda generation, warnings: self.engine.search(
            request, generation, warnings=(*warnings, *extra), freshness=freshness))

    def get(self, identity, start_line=None, end_line=None) -> dict:
        name = clean_text(identity, "identity", MAX_NAME_CHARS)
        self._generation()
        path = self._resolve_path(name)
        doc = self._source.load(path)
        total = len(doc.lines)
        first = 1 if start_line is None else bounded_int(start_line, "start_line", 1, 10**9)
        last = total if end_line is None else bounded_int(end_line, "end_line", 1, 10**9)
        if total and first > total:
            raise InvalidRequest(f"start_line {first} is past the end of {path} ({total} lines)")
        if last < first:
            raise InvalidRequest("end_line must not be before start_line")
        last = min(last, total, first + MAX_GET_LINES - 1)
        note = doc.note
        clean, findings = redact_lines(doc.lines)
        return {
            "memory_id": note.memory_id, "path": note.path, "title": redact_text(note.title),
            "status": note.effective_status.value, "content_hash": note.content_hash,
            "front_matter": redact_data(doc.front_matter), "line_count": total,
            "start_line": first, "end_line": last,
            "lines": [{"line": i, "text": clean[i - 1]} for i in range(first, last + 1)],
            "redacted_lines": sorted({f.line for f in findings if first <= f.line <= last}),
            "truncated": last < (total if end_line is None else min(end_line, total)),
            "warnings": list(doc.warnings),
        }

    def neighbors(self, identity, depth=1) -> dict:
        note = self._resolve_note(clean_text(identity, "identity", MAX_NAME_CHARS))
        depth = bounded_int(depth, "depth", 1, MAX_DEPTH)
        graph = self._require_graph()
        found = graph.neighbors(note.memory_id, depth)
        return {"memory_id": note.memory_id, "path": note.path, "depth": depth,
                "graph_generation": graph.current().id,
                "neighbors": [redact_data(n.as_dict()) for n in found]}

    def path(self, source, target) -> dict:
        a = self._resolve_note(clean_text(source, "source", MAX_NAME_CHARS))
        b = self._resolve_note(clean_text(target, "target", MAX_NAME_CHARS))
        graph = self._require_graph()
        found = graph.path(a.memory_id, b.memory_id)
        return {"source": {"memory_id": a.memory_id, "path": a.path},
                "target": {"memory_id": b.memory_id, "path": b.path},
                "graph_generation": graph.current().id,
                "connected": found is not None,
                "path": redact_data(found.as_dict()) if found else None}

    def explain(self, query, identity=None, **filters) -> dict:
        request = SearchRequest.parse(query, **filters)
        generation, warnings, trace = self._from_one_generation(
            lambda generation, warnings: (generation, warnings, self.engine.trace(request)))
        fusion, lists, features = self.engine.config.fusion, trace.gathered.lists, \
            trace.query.features
        out = {
            "query": request.query, "scope": trace.query.scope.as_dict(),
            "generation": generation.as_dict(), "no_answer": trace.no_answer,
            "terms": list(features.terms),
            "identifiers": list(features.identifiers),
            "fusion": fusion.method, "weights": dict(fusion.weights),
            "rrf_k": fusion.rrf_k,
            "counts": {"lexical": len(lists.lexical), "semantic": len(lists.semantic),
                       "graph": len(lists.graph)},
            "candidates": [self._explain_candidate(c, trace, i) for i, c in
                           enumerate(trace.ranked[:request.limit], 1)],
            "warnings": [*warnings, *trace.warnings],
        }
        if identity is not None:
            out["identity"] = self._explain_identity(
                clean_text(identity, "identity", MAX_NAME_CHARS), trace)
        return out

    # -- writing -------------------------------------------------------------------------

    def refresh(self, mode="index", force=False, progress: Progress | None = None) -> RefreshReport:
        if not isinstance(mode, str) or mode not in ("index", "full"):
            raise InvalidRequest(f"mode must be 'index' or 'full', not {mode!r}")
        if not isinstance(force, bool):
            raise InvalidRequest("force must be true or false")
        report = self._indexer.refresh(mode, force, progress)
        self._generation()
        return report

    def feedback(self, query, memory_id, relevance, note=None) -> dict:
        query = clean_text(query, "query", MAX_QUERY_CHARS)
        name = clean_text(memory_id, "memory_id", MAX_NAME_CHARS)
        if relevance not in RELEVANCE:
            raise InvalidRequest(f"relevance must be one of {', '.join(RELEVANCE)}, not {relevance!r}")
        text = clean_text(note, "note", MAX_NOTE_CHARS, required=False)
        target = self._resolve_note(name)
        generation, _ = self._generation()
        record = {"time": self._clock.now_iso(), "query": query, "memory_id": target.memory_id,
                  "path": target.path, "relevance": relevance, "note": text,
                  "generation": generation.as_dict()}
        self._feedback.append(record)
        return {"recorded": True, **record}

    # -- health --------------------------------------------------------------------------

    def health(self) -> dict:
        generation, warnings = self._generation()
        index = self._index.current()
        problems = list(self._index.check_current())
        if index is None:
            problems.append("no index generation: run memory_refresh")
        changed = self._changed_since(index)
        newest = changed.pop("newest_mtime_ns")
        older = index is not None and _older_than(index.created, newest)
        if older:
            warnings.append("the index is older than the newest Markdown change: run "
                            "memory_refresh (a running `ai-memory serve` does it by itself)")
        graph_info = self._graph.current() if self._graph else None
        graph_problems = list(self._graphs.check_current()) if self._graphs else []
        if self._graph is not None:
            graph_problems += [p for p in self._graph.problems() if p not in graph_problems]
        embedder = self._embedder.state()
        self_check = self._self_check()
        healthy = index is not None and not problems and self_check["ok"]
        return {
            "healthy": healthy,
            "root": self._source.root,
            "index": {**(index.as_dict() if index else {"id": None}),
                      "files_changed_since": changed, "problems": problems,
                      "newest_source_change": _iso(newest),
                      "older_than_sources": older},
            "graph": {**(graph_info.as_dict() if graph_info else {"id": None}),
                      "problems": graph_problems},
            "embedder": {"model_id": self._embedder.model_id,
                         "dimension": self._embedder.dimension, "state": embedder,
                         "semantic_search": embedder == "ready"},
            "last_refresh": self._history.last(),
            "feedback_records": self._feedback.count(),
            "self_check": self_check,
            "notes_past_review": self._past_review(),
            "notes_with_secrets": self._secrets(),
            "warnings": warnings,
        }

    # -- helpers -------------------------------------------------------------------------

    def _from_one_generation(self, read: Callable[[Generation, list[str]], T]) -> T:
        """Run a read whose every part comes from the generation it is labelled with.

        Another process may publish while the read runs, and the stores switch on their
        next access; a read that saw the generation change is done again (publishes are
        seconds apart, so a second attempt almost always holds still).
        """
        for _ in range(READ_ATTEMPTS):
            generation, warnings = self._generation()
            with self._index.steady():
                result = read(generation, warnings)
            if self._generation()[0] == generation:
                break
        return result

    def _generation(self) -> tuple[Generation, list[str]]:
        """Switch to the newest published generations; say what is missing."""
        warnings = []
        index = self._index.current()
        if index is None:
            warnings.append("no index yet: run memory_refresh (nothing can be found)")
        elif index.model_id and index.model_id != self._embedder.model_id:
            warnings.append(f"the index's vectors come from {index.model_id} and queries are "
                            f"embedded by {self._embedder.model_id}: run memory_refresh to "
                            "re-embed (semantic ranks are approximate until then)")
        graph = self._graph.current() if self._graph else None
        return Generation(index=index.id if index else None,
                          graph=graph.id if graph else None), warnings

    def _changed_since(self, index) -> dict:
        scan = self._source.scan()
        diff = diff_scan(index.manifest if index else {}, scan.files)
        return {"added": len(diff.added), "removed": len(diff.removed),
                "modified": len(diff.suspect), "examples": list(
                    (diff.added + diff.suspect + diff.removed)[:5]),
                "newest_mtime_ns": max((f.mtime_ns for f in scan.files.values()), default=None)}

    def _self_check(self) -> dict:
        notes = self._chunks.notes()
        if not notes:
            return {"ok": False, "detail": "the index holds no notes"}
        note = notes[len(notes) // 2]
        chunk = next((c for c in self._chunks.chunks_of(note.memory_id) if c.text.strip()), None)
        if chunk is None:
            return {"ok": True, "detail": f"{note.path} has no text to probe"}
        probe = " ".join(chunk.text.split()[:12])
        hits = self._chunks.search(probe, ScopeFilter(status=StatusFilter.ANY), 20)
        ok = any(h.note.memory_id == note.memory_id for h in hits)
        return {"ok": ok, "probe": probe[:80], "expected": note.path,
                "detail": "found" if ok else "the probe did not find its own note"}

    def _past_review(self) -> list[str]:
        today = self._clock.now_iso()[:10]
        return [n.path for n in self._chunks.notes()
                if n.review_after and n.review_after[:10] < today][:50]

    def _secrets(self) -> list[dict]:
        """Notes holding secret-shaped text, so a person can clean them (values not shown)."""
        found = []
        for note in self._chunks.notes(ScopeFilter(status=StatusFilter.ANY)):
            _, findings = redact_lines(self._chunks.lines(note.memory_id))
            if findings:
                found.append({"path": note.path, "lines": sorted({f.line for f in findings})[:20],
                              "kinds": sorted({f.kind for f in findings})})
        return found

    def _resolve_path(self, name: str) -> str:
        matches = self._chunks.find(name)
        if len(matches) >= 1:
            return matches[0].path
        if not ("/" in name or "\\" in name or name.lower().endswith(".md")):
            # Neither a known id or title nor written as a path: the note does not exist
            # (the source would only call it "not a Markdown note").
            raise NotFound(f"no note named {name!r} (try memory_search to find its memory_id)")
        return name  # a path not (yet) indexed: the source validates and reads it

    def _resolve_note(self, name: str) -> Note:
        self._generation()
        matches = self._chunks.find(name)
        if not matches:
            raise NotFound(f"no note named {name!r} (try memory_search to find its memory_id)")
        return matches[0]

    def _require_graph(self) -> GraphProvider:
        if self._graph is None or self._graph.current() is None:
            raise Unavailable("no graph yet: run memory_refresh with mode 'full' to build it")
        return self._graph

    @staticmethod
    def _explain_candidate(c, trace, rank: int) -> dict:
        return {
            "rank": rank, "memory_id": c.note.memory_id, "path": c.note.path,
            "citation": f"{c.chunk.path}:L{c.chunk.start_line}-L{c.chunk.end_line}",
            "fused": round(c.fused, 6), "bonus": round(c.bonus, 6), "score": round(c.score, 6),
            "signals": {"lexical": {"rank": c.lexical_rank, "score": c.lexical_score},
                        "semantic": {"rank": c.semantic_rank, "score": c.semantic_score},
                        "graph": {"rank": c.graph_rank}},
            "matched_terms": list(trace.query.features.matched_terms(c.chunk.indexed_text)),
            "reasons": list(c.reasons), "status": c.note.effective_status.value,
            "returned": c in trace.chosen and not trace.no_answer,
        }

    def _explain_identity(self, name: str, trace) -> dict:
        matches = self._chunks.find(name)
        if not matches:
            return {"name": name, "found": False, "why": "no note has this memory_id, path or title"}
        note = matches[0]
        out = {"name": name, "found": True, "memory_id": note.memory_id, "path": note.path,
               "status": note.effective_status.value}
        flt = trace.query.scope.filter
        if not flt.admits(note):
            out["returned"] = False
            out["why"] = _exclusion_reason(note, flt)
            return out
        ranks = [(i, c) for i, c in enumerate(trace.ranked, 1) if c.note.memory_id == note.memory_id]
        returned = any(c.note.memory_id == note.memory_id for c in trace.chosen) and not trace.no_answer
        out["returned"] = returned
        if not ranks:
            out["why"] = ("in scope, but no signal found it: none of its chunks matched the query "
                          "words, was near the query vector, or was close in the graph")
            return out
        rank, best = ranks[0]
        out["best_rank"] = rank
        out["signals"] = {"lexical": best.lexical_rank, "semantic": best.semantic_rank,
                          "graph": best.graph_rank}
        out["matched_terms"] = list(trace.query.features.matched_terms(best.chunk.indexed_text))
        out["why"] = ("returned" if returned else
                      "no answer: confidence too low" if trace.no_answer else
                      f"ranked {rank}, below the cut-off of the requested limit")
        return out


def _iso(mtime_ns: int | None) -> str | None:
    if not mtime_ns:
        return None
    return datetime.fromtimestamp(mtime_ns / 1e9, timezone.utc).isoformat(timespec="seconds")


def _older_than(created: str, newest_mtime_ns: int | None) -> bool:
    """True when a source file changed at least a second after the generation was created."""
    if not newest_mtime_ns or not created:
        return False
    try:
        made = datetime.fromisoformat(created.replace("Z", "+00:00"))
    except ValueError:
        return False
    if made.tzinfo is None:
        made = made.replace(tzinfo=timezone.utc)
    return newest_mtime_ns / 1e9 >= made.timestamp() + 1.0  # created is kept to the second


def _exclusion_reason(note: Note, flt) -> str:
    for name in ("root_scope", "repository", "project", "ticket", "path_prefix"):
        value = getattr(flt, name)
        if value and not ScopeFilter(**{name: value, "status": StatusFilter.ANY}).admits(note):
            return f"outside the requested {name} {value!r}"
    return f"status {note.effective_status.value!r} is filtered out by status={flt.status.value!r}"
