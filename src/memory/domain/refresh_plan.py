"""The refresh plan: what one index refresh must do with the current generation, and why."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import Enum

from attrs import field, frozen

from memory.domain.refresh import GenerationInfo, ManifestEntry


class Reason(Enum):
    """Why a refresh cannot simply edit the current generation (or must publish anyway)."""

    FIRST = "no index yet"
    DAMAGED = "the current index is damaged"
    CHUNKING = "chunking changed"
    MODEL = "the embedding model changed"
    FULL = "a full refresh"
    FORCED = "forced"


_REBUILDS = (Reason.FIRST, Reason.DAMAGED, Reason.CHUNKING, Reason.MODEL, Reason.FULL)


@frozen(kw_only=True)
class RefreshPlan:
    """Decided before any note is read; the indexer carries it out step by step.

    Reusing edits a copy of the current generation: only notes whose stat moved are read,
    chunked and embedded. Rebuilding starts from an empty one and re-chunks every note
    (vectors of unchanged text still come from the cache). Re-embedding means the index's
    vectors all change model, whatever the cache holds.
    """

    base: str | None  # the generation the stage copies; None: start empty
    model_id: str | None  # the model the new generation's vectors come from; None: no vectors
    reasons: tuple[Reason, ...] = ()
    warnings: tuple[str, ...] = ()
    # What the notes were when the base was built, to diff the scan with (empty: rebuild).
    previous: Mapping[str, ManifestEntry] = field(factory=dict, repr=False, eq=False)

    @property
    def rechunk(self) -> bool:
        """Every note is read and chunked again (a rebuild)."""
        return self.base is None

    @property
    def semantic(self) -> bool:
        return self.model_id is not None

    @property
    def forced(self) -> bool:
        """Publish a new generation even when no note changed."""
        return Reason.FORCED in self.reasons

    def describe(self) -> str:
        """One line for the refresh report: 'incremental' or 'rebuilt from the notes: ...'."""
        why = [r.value for r in self.reasons if r in _REBUILDS]
        done = "rebuilt from the notes: " + ", ".join(why) if self.rechunk else "incremental"
        return done + (" (forced)" if self.forced else "")


def plan_refresh(*, current: GenerationInfo | None, damage: Sequence[str], model_id: str | None,
                 chunking: str, full: bool, force: bool) -> RefreshPlan:
    """The plan for an index refresh, from what the current generation records.

    `damage` lists problems found in the current generation (a damaged one is no base to
    edit, nor a reason to say "unchanged"); `model_id` is None when the embedding model is
    unavailable and the index is built without vectors.
    """
    reasons = _reasons(current, damage, model_id, chunking, full)
    rebuild = any(r in _REBUILDS for r in reasons)
    return RefreshPlan(
        base=None if rebuild or current is None else current.id, model_id=model_id,
        reasons=(*reasons, *((Reason.FORCED,) if force else ())),
        warnings=_warnings(current, damage, model_id, chunking, full, reasons),
        previous={} if rebuild or current is None else dict(current.manifest))


def _reasons(current: GenerationInfo | None, damage: Sequence[str], model_id: str | None,
             chunking: str, full: bool) -> tuple[Reason, ...]:
    if current is None:
        return (Reason.FIRST,)
    if damage:  # what it records about itself can no longer be trusted
        return (Reason.DAMAGED, *((Reason.FULL,) if full else ()))
    found = []
    if current.chunking != chunking:
        found.append(Reason.CHUNKING)
    if current.model_id != model_id:  # changed, or vectors switched on or off
        found.append(Reason.MODEL)
    if full:
        found.append(Reason.FULL)
    return tuple(found)


def _warnings(current: GenerationInfo | None, damage: Sequence[str], model_id: str | None,
              chunking: str, full: bool, reasons: tuple[Reason, ...]) -> tuple[str, ...]:
    out = []
    if Reason.DAMAGED in reasons:
        out.append(f"index rebuilt from the notes: {damage[0]}")
    if current is None:  # a first build: nothing to compare with
        return tuple(out)
    if Reason.CHUNKING in reasons and not full:
        out.append(f"index rebuilt from the notes: chunking changed "
                   f"({current.chunking or 'unrecorded'} -> {chunking})")
    if Reason.MODEL in reasons and current.model_id and model_id:
        out.append(f"index re-embedded: the embedding model changed "
                   f"({current.model_id} -> {model_id})")
    return tuple(out)
