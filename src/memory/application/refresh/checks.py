"""The checks a staged index or graph generation must pass before it is published."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from memory.domain.notes import NoteDocument
from memory.domain.refresh import Check, GenerationInfo, ManifestEntry, ValidationReport
from memory.domain.refresh_plan import RefreshPlan
from memory.domain.text import content_terms
from memory.ports.embedder import Embedder
from memory.ports.graph_generations import GraphFacts
from memory.ports.index_generations import IndexStage


def validate_index(stage: IndexStage, expected: Mapping[str, ManifestEntry], plan: RefreshPlan,
                   embedder: Embedder, added: Sequence[NoteDocument],
                   current: GenerationInfo | None, max_shrink: float = 0.5) -> ValidationReport:
    """Integrity, counts against the manifest, every note present, vectors, a self-query,
    and, unless forced, no index emptied by a root that holds no notes nor shrunk by more
    than `max_shrink` of its notes."""
    facts, semantic = stage.facts(), plan.semantic
    checks = [
        Check(name="integrity", ok=facts.integrity == "ok", detail=facts.integrity),
        Check(name="notes-match-manifest", ok=facts.notes == len(expected),
              detail=f"{facts.notes} notes, manifest lists {len(expected)}"),
        Check(name="every-note-present", ok=facts.paths == frozenset(expected),
              detail=_missing_detail(facts.paths, frozenset(expected))),
    ]
    if semantic:
        checks.append(Check(name="vectors", ok=facts.vectors == facts.chunks,
                            detail=f"{facts.vectors} vectors for {facts.chunks} chunks"))
        checks.append(Check(name="dimension",
                            ok=facts.chunks == 0 or facts.dimension == embedder.dimension,
                            detail=f"{facts.dimension} (model {embedder.dimension})"))
    checks.append(_self_query(stage, semantic, embedder, added))
    checks.append(_not_emptied(facts.notes, current, plan.forced))
    checks.append(shrink_check(facts.notes, current.notes if current else 0, plan.forced,
                               max_shrink, "index"))
    return ValidationReport(checks=tuple(checks))


def _not_emptied(notes: int, current: GenerationInfo | None, forced: bool) -> Check:
    # A root with no notes over an index that has some is a wrong --root or an unmounted
    # folder far more often than a memory deleted on purpose; with a shared store it would
    # empty every server's answers.
    held = current.notes if current is not None else 0
    ok = forced or notes > 0 or held == 0
    return Check(name="not-emptied", ok=ok,
                 detail=f"{notes} notes (the index held {held})" if ok else
                 f"the root holds no notes and the index held {held}: check the root "
                 f"(force publishes an empty index)")


# Fewer lost notes than this are never judged a shrink: small roots lose most of their notes
# to ordinary edits (three notes, two deleted).
MIN_SHRINK_NOTES = 10


def shrink_check(now: int, before: int, forced: bool, max_shrink: float, what: str) -> Check:
    """One rule for the index and the graph: losing more than `max_shrink` of the notes at
    once (at least MIN_SHRINK_NOTES) is a folder not mounted or checked out, a wrong --root,
    another person's root over a shared store, more often than a deliberate mass deletion
    (force publishes that). An emptied root has its own check."""
    ok = (forced or now == 0 or before - now < MIN_SHRINK_NOTES
          or now >= before * (1 - max_shrink))
    return Check(name="shrink", ok=ok,
                 detail=f"{now} notes (the {what} held {before})" if ok else
                 f"the root holds {now} notes and the {what} held {before}: more than "
                 f"{max_shrink:.0%} would go at once; check the root (a folder not mounted, "
                 f"a wrong --root), or force publishes it")


def _self_query(stage: IndexStage, semantic: bool, embedder: Embedder,
                added: Sequence[NoteDocument]) -> Check:
    # Probe with a chunk that has real words: `---` or a lone fence matches nothing.
    probe = next((c for d in added for c in d.chunks if len(content_terms(c.text)) >= 2), None)
    if probe is None:
        return Check(name="self-query", ok=True, detail="no new chunk to probe")
    vector = embedder.embed_query(probe.indexed_text) if semantic else None
    lexical, nearest = stage.probe(probe.indexed_text, vector, 10)
    missed = [how for how, found in (("lexically", probe.chunk_id in lexical),
                                     ("semantically", not semantic or probe.chunk_id in nearest))
              if not found]
    detail = f"{probe.chunk_id} " + (f"not found {' or '.join(missed)}" if missed else "found")
    return Check(name="self-query", ok=not missed, detail=detail)


def validate_graph(facts: GraphFacts, docs: Sequence[NoteDocument], previous: GenerationInfo | None,
                   force: bool, max_shrink: float) -> ValidationReport:
    """Built, a page node per note, no dangling edge, and no large shrink unless forced."""
    missing = frozenset(d.note.memory_id for d in docs) - facts.page_notes
    checks = [
        Check(name="built", ok=facts.nodes > 0, detail=f"{facts.nodes} nodes, {facts.edges} edges"),
        Check(name="page-node-per-note", ok=not missing,
              detail=f"{len(missing)} notes without a page node" + (
                  f", e.g. {sorted(missing)[0]}" if missing else "")),
        Check(name="no-dangling-edge", ok=facts.dangling_edges == 0,
              detail=f"{facts.dangling_edges} dangling edges"),
    ]
    checks.append(shrink_check(len(facts.page_notes), previous.notes if previous else 0, force,
                               max_shrink, "graph"))
    return ValidationReport(checks=tuple(checks))


def failures_text(validation: ValidationReport) -> str:
    return "; ".join(f"{c.name}: {c.detail}" for c in validation.failures)


def _missing_detail(have: frozenset[str], want: frozenset[str]) -> str:
    missing, extra = sorted(want - have), sorted(have - want)
    if not (missing or extra):
        return "all present"
    return f"missing {missing[:3]} extra {extra[:3]}"
