"""Plain-text renderings of a refresh report, the health check and a feedback receipt."""

from __future__ import annotations

from memory.domain.feedback import FeedbackReceipt
from memory.domain.health import Health, IndexHealth, WriteAccess
from memory.domain.model_state import EmbedderState
from memory.domain.refresh import GenerationInfo, RefreshReport, Stage, StageOutcome
from memory.entrypoints.presenters import generation_line, warning_lines
from memory.entrypoints.text_safety import shown

NO_WRITE_TOOLS = "read-only: no memory_write or memory_edit"


def refresh_text(report: RefreshReport) -> str:
    out = [f"refresh ({report.mode}): {'ok' if report.ok else 'FAILED'}"]
    out += [f"{name} generation: {gen}" for name, gen in
            ((Stage.INDEX, report.index_generation), (Stage.GRAPH, report.graph_generation)) if gen]
    for s in report.stages:
        line = f"  {s.stage}: {s.outcome}"
        if s.generation:
            line += f" -> {s.generation}"
        published = s.outcome is StageOutcome.PUBLISHED
        if published and s.stage is Stage.INDEX:
            line += (f" (+{s.added} ~{s.changed} -{s.removed}; embedded {s.embedded},"
                     f" reused {s.reused_vectors}; {s.seconds:.1f}s)")
        elif published and s.stage is Stage.GRAPH:
            line += f" ({s.seconds:.1f}s)"
        if s.reason and not published:
            line += f": {shown(s.reason)}"
        out.append(line)
    out += warning_lines(report.warnings)
    return "\n".join(out)


def _generation(info: GenerationInfo | None, counts: str) -> str:
    return "none" if info is None else f"{info.id} ({counts})"


def model_words(state: EmbedderState, failure: str | None) -> str:
    """The model's state as what the user gets from it, not the loader's word for it."""
    if state is EmbedderState.READY:
        return "ready; semantic search on"
    if state is EmbedderState.NOT_LOADED:
        return "loads on first use (a few seconds), then semantic search is on"
    if state is EmbedderState.LOADING:
        return "loading; searches until it is ready are lexical only"
    return f"off ({shown(failure or 'failed to load')}); searches are lexical only"


def health_text(h: Health) -> str:
    idx, graph, emb = h.index, h.graph, h.embedder
    out = [
        f"{'healthy' if h.healthy else 'UNHEALTHY'}: {shown(h.root)}",
        *_index_lines(idx),
        "graph: " + _generation(graph.generation, graph.generation and
                                f"{graph.generation.nodes} nodes, {graph.generation.edges} edges")
        + (f"; behind the index by {graph.behind_index} notes" if graph.behind_index else ""),
        f"embedder: {shown(emb.model_id)}: {model_words(emb.state, emb.failure)}",
        f"self-check: {'ok' if h.self_check.ok else 'FAILED'}: {shown(h.self_check.detail)}",
        _writes(h.writes),
    ]
    out += [f"problem: {shown(p)}" for p in (*idx.problems, *graph.problems)]
    if h.notes_past_review:
        out.append(f"notes past review: {len(h.notes_past_review)}")
    out += [f"secret-shaped text: {shown(n.path)} lines {', '.join(map(str, n.lines))} "
            f"({', '.join(n.kinds)})" for n in h.notes_with_secrets]
    out += warning_lines(h.warnings)
    return "\n".join(out)


def _index_lines(idx: IndexHealth) -> list[str]:
    index, changed = idx.generation, idx.files_changed_since
    line = "index: " + _generation(index, index and f"{index.notes} notes, {index.chunks} "
                                                    f"chunks, {index.vectors} vectors")
    if idx.refreshed_by is not None:  # a reader: its root is not what the index is of
        published = f"; published {index.created}" if index else ""
        return [line + published, f"refreshed elsewhere: {shown(idx.refreshed_by)}"]
    if changed is not None:
        line += f"; changed since: +{changed.added} ~{changed.modified} -{changed.removed}"
    return [line + ("; older than the newest note edit" if idx.older_than_sources else "")]


def _writes(writes: WriteAccess) -> str:
    if not writes.enabled:
        return f"writes: off ({shown(writes.reason or NO_WRITE_TOOLS)})"
    return "writes: on (memory_write, memory_edit)" + (
        "; each one committed to the root's git work tree" if writes.git_commit else "")


def feedback_text(r: FeedbackReceipt) -> str:
    return (f"recorded: {r.relevance} {shown(r.path)} (memory_id {shown(r.memory_id)}) for "
            f"query {shown(r.query)}\n" + generation_line(r.generation))
