"""What a read is told about the index it reads: current, refreshed before it, stale, or not
indexed at all (never built, or its folder deleted)."""

from __future__ import annotations

from collections.abc import Sequence

from attrs import field, frozen

from memory.application.refresh.catch_up import CatchUp, CatchUpOutcome
from memory.domain.evidence import Generation
from memory.domain.freshness import Freshness
from memory.domain.messages import Action, Message
from memory.domain.refresh import BuildProgress


@frozen(kw_only=True)
class Verdict:
    """What a read says of the index it was served from: its freshness and why."""

    freshness: Freshness = field(default=Freshness.CURRENT, converter=Freshness)
    warnings: tuple[str, ...] = ()

    @classmethod
    def stale(cls, warning: str) -> Verdict:
        return cls(freshness=Freshness.STALE, warnings=(warning,))

    @classmethod
    def not_indexed(cls, warning: str) -> Verdict:
        return cls(freshness=Freshness.NOT_INDEXED, warnings=(warning,))


CURRENT = Verdict()
REFRESHED = Verdict(freshness=Freshness.REFRESHED)


def judge(result: CatchUp, *, changed_generation: bool, watching: bool,
          progress: BuildProgress | None, background: bool = True) -> Verdict:
    """The verdict on a search's attempt to catch up; `changed_generation` says whether the
    current generation is another one than before the attempt (another process published);
    `background` whether this process indexes what the search left (a server) or not (a
    one-shot command)."""
    n = result.changed
    ok = result.report is None or result.report.ok
    if result.outcome.caught_up and result.held and ok:
        later = "are being indexed in the background" if background \
            else Message("are left for ", Action.REFRESH)
        return Verdict.stale(Message(f"stale index: {len(result.held)} big notes "
                                     f"(e.g. {result.held[0]}) ", later,
                                     "; results may miss them"))
    if result.outcome is CatchUpOutcome.NOTHING:
        return REFRESHED if changed_generation else CURRENT
    if result.outcome is CatchUpOutcome.REFRESHED and result.report is not None and ok:
        return REFRESHED
    running = f" ({progress.summary()})" if progress else ""
    why = {
        CatchUpOutcome.REFRESHED: f"a refresh kept the last good index ({result.detail})",
        CatchUpOutcome.BUSY: f"{n} changed notes are not indexed yet: {result.detail}{running}",
        CatchUpOutcome.TOO_MANY: Message(
            f"{n} notes changed since the index was built; ",
            "they are being indexed in the background" if watching and background
            else Message("run ", Action.REFRESH, " to index them")),
        CatchUpOutcome.MODEL_LOADING: f"{n} changed notes wait for the embedding model to load",
        CatchUpOutcome.FAILED: f"changed notes could not be indexed: {result.detail}",
        CatchUpOutcome.CANCELLED: f"indexing {n} changed notes was interrupted: {result.detail}",
    }[result.outcome]
    return Verdict.stale(Message("stale index: ", why, "; results may miss recent edits"))


def building(progress: BuildProgress) -> Verdict:
    return Verdict.not_indexed(f"{progress.describe()}; results are incomplete until it is done")


def no_index_yet(notes: int) -> Verdict:
    return Verdict.not_indexed(
        f"index being built: not indexed yet, {notes:,} notes are being indexed in the "
        "background; results are incomplete until it is done")


def not_indexed(notes: int) -> Verdict:
    """No index and nobody building one: the command that builds it."""
    count = "1 note" if notes == 1 else f"{notes:,} notes"
    return Verdict.not_indexed(
        Message(f"not indexed: this memory root has no index yet ({count}); run ",
                Action.REFRESH, " to build it (nothing can be found until then)"))


def read_verdict(verdict: Verdict, generation: Generation, warnings: Sequence[str]) -> Verdict:
    """The verdict on a read of `generation`: one with no index is NOT_INDEXED whatever the
    step said (never CURRENT), and what the step said about the missing index (it is being
    built) replaces the generic advice."""
    if generation.index is None:
        return Verdict(freshness=Freshness.NOT_INDEXED,
                       warnings=tuple(verdict.warnings or warnings))
    if verdict.freshness is Freshness.NOT_INDEXED:  # built meanwhile (the background, another)
        return Verdict(freshness=Freshness.REFRESHED, warnings=tuple(warnings))
    return Verdict(freshness=verdict.freshness, warnings=(*warnings, *verdict.warnings))
