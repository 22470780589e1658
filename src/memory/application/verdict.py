"""What a search is told about the index it reads: current, refreshed before it, or stale."""

from __future__ import annotations

from memory.application.catch_up import CatchUp
from memory.domain.refresh import BuildProgress

CURRENT = "current"
REFRESHED = "refreshed-before-search"
STALE = "stale"

Verdict = tuple[str, tuple[str, ...]]  # (freshness, warnings)


def judge(result: CatchUp, *, changed_generation: bool, watching: bool,
          progress: BuildProgress | None) -> Verdict:
    """The verdict on a search's attempt to catch up; `changed_generation` says whether the
    current generation is another one than before the attempt (another process published)."""
    n = result.changed
    if result.outcome in ("nothing", "refreshed") and result.held and (
            result.report is None or result.report.ok):
        return (STALE, (f"stale index: {len(result.held)} big notes (e.g. {result.held[0]}) "
                        "are being indexed in the background; results may miss them",))
    if result.outcome == "nothing":
        return (REFRESHED if changed_generation else CURRENT, ())
    if result.outcome == "refreshed" and result.report is not None and result.report.ok:
        return (REFRESHED, ())
    running = f" ({progress.summary()})" if progress else ""
    why = {
        "refreshed": f"a refresh kept the last good index ({result.detail})",
        "busy": f"{n} changed notes are not indexed yet: {result.detail}{running}",
        "too-many": f"{n} notes changed since the index was built; "
                    + ("they are being indexed in the background" if watching
                       else "run memory_refresh to index them"),
        "model-loading": f"{n} changed notes wait for the embedding model to load",
        "failed": f"changed notes could not be indexed: {result.detail}",
        "cancelled": f"indexing {n} changed notes was interrupted: {result.detail}",
    }[result.outcome]
    return (STALE, (f"stale index: {why}; results may miss recent edits",))


def building(progress: BuildProgress) -> Verdict:
    return (STALE, (f"{progress.describe()}; results are incomplete until it is done",))


def no_index_yet(notes: int) -> Verdict:
    return (STALE, (f"index being built: no index yet, {notes:,} notes are being indexed "
                    "in the background; results are incomplete until it is done",))
