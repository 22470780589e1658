"""What a read is told about the index it reads: current, refreshed before it, stale, or not
indexed at all (never built, or its folder deleted)."""

from __future__ import annotations

from memory.application.refresh.catch_up import CatchUp
from memory.domain.evidence import Generation
from memory.domain.refresh import BuildProgress

CURRENT = "current"
REFRESHED = "refreshed-before-search"
STALE = "stale"
NOT_INDEXED = "not-indexed"

Verdict = tuple[str, tuple[str, ...]]  # (freshness, warnings)


def judge(result: CatchUp, *, changed_generation: bool, watching: bool,
          progress: BuildProgress | None, background: bool = True) -> Verdict:
    """The verdict on a search's attempt to catch up; `changed_generation` says whether the
    current generation is another one than before the attempt (another process published);
    `background` whether this process indexes what the search left (a server) or not (a
    one-shot command)."""
    n = result.changed
    if result.outcome in ("nothing", "refreshed") and result.held and (
            result.report is None or result.report.ok):
        later = "are being indexed in the background" if background \
            else "are left for memory_refresh"
        return (STALE, (f"stale index: {len(result.held)} big notes (e.g. {result.held[0]}) "
                        f"{later}; results may miss them",))
    if result.outcome == "nothing":
        return (REFRESHED if changed_generation else CURRENT, ())
    if result.outcome == "refreshed" and result.report is not None and result.report.ok:
        return (REFRESHED, ())
    running = f" ({progress.summary()})" if progress else ""
    why = {
        "refreshed": f"a refresh kept the last good index ({result.detail})",
        "busy": f"{n} changed notes are not indexed yet: {result.detail}{running}",
        "too-many": f"{n} notes changed since the index was built; "
                    + ("they are being indexed in the background" if watching and background
                       else "run memory_refresh to index them"),
        "model-loading": f"{n} changed notes wait for the embedding model to load",
        "failed": f"changed notes could not be indexed: {result.detail}",
        "cancelled": f"indexing {n} changed notes was interrupted: {result.detail}",
    }[result.outcome]
    return (STALE, (f"stale index: {why}; results may miss recent edits",))


def building(progress: BuildProgress) -> Verdict:
    return (NOT_INDEXED, (f"{progress.describe()}; results are incomplete until it is done",))


def no_index_yet(notes: int) -> Verdict:
    return (NOT_INDEXED, (f"index being built: not indexed yet, {notes:,} notes are being "
                          "indexed in the background; results are incomplete until it is done",))


def not_indexed(notes: int) -> Verdict:
    """No index and nobody building one: the command that builds it."""
    count = "1 note" if notes == 1 else f"{notes:,} notes"
    return (NOT_INDEXED, (f"not indexed: this memory root has no index yet ({count}); "
                          "run memory_refresh to build it (nothing can be found until then)",))


def read_verdict(verdict: Verdict, generation: Generation,
                 warnings: list[str]) -> tuple[str, tuple[str, ...]]:
    """(freshness, warnings) of a read of `generation`: one with no index is `not-indexed`
    whatever the step said (never `current`), and what the step said about the missing index
    (it is being built) replaces the generic advice."""
    freshness, extra = verdict
    if generation.index is None:
        return NOT_INDEXED, tuple(extra or warnings)
    if freshness == NOT_INDEXED:  # built in the meantime (by the background, another process)
        return REFRESHED, tuple(warnings)
    return freshness, (*warnings, *extra)
