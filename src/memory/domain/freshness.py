"""How current the index a read was served from is, as the packet's `freshness` says."""

from __future__ import annotations

from enum import StrEnum


class Freshness(StrEnum):
    CURRENT = "current"  # the index holds every note as it is now
    REFRESHED = "refreshed-before-search"  # it was caught up with the root just before
    STALE = "stale"  # edits it lacks were left for later (the warnings say which and why)
    NOT_INDEXED = "not-indexed"  # no index at all: never built, or its folder deleted
