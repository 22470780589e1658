"""Refresh values: source manifests, their differences, validation and the report."""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any

from attrs import field, frozen


@frozen(kw_only=True)
class SourceFile:
    """A Markdown file as a directory scan sees it, before it is read."""

    path: str
    size: int
    mtime_ns: int


@frozen(kw_only=True)
class ManifestEntry:
    path: str
    content_hash: str
    size: int
    mtime_ns: int


@frozen(kw_only=True)
class ManifestDiff:
    added: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    suspect: tuple[str, ...] = ()  # stat differs; must be read to know


def diff_scan(previous: Mapping[str, ManifestEntry], scan: Mapping[str, SourceFile]) -> ManifestDiff:
    """Compare a scan with the last manifest by stat; files whose stat moved are suspects."""
    added = tuple(sorted(p for p in scan if p not in previous))
    removed = tuple(sorted(p for p in previous if p not in scan))
    suspect = tuple(sorted(
        p for p, f in scan.items()
        if p in previous and (previous[p].size != f.size or previous[p].mtime_ns != f.mtime_ns)))
    return ManifestDiff(added=added, removed=removed, suspect=suspect)


def manifest_changes(before: Mapping[str, ManifestEntry],
                     after: Mapping[str, ManifestEntry]) -> ManifestDiff:
    """What a new generation changed in the notes against the one it replaces: a rebuild
    that re-read every note changed none of them unless their text or paths moved."""
    return ManifestDiff(
        added=tuple(sorted(p for p in after if p not in before)),
        changed=tuple(sorted(p for p in after if p in before
                             and before[p].content_hash != after[p].content_hash)),
        removed=tuple(sorted(p for p in before if p not in after)))


@frozen(kw_only=True)
class Check:
    name: str
    ok: bool
    detail: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "ok": self.ok, "detail": self.detail}


@frozen(kw_only=True)
class ValidationReport:
    checks: tuple[Check, ...] = ()

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)

    @property
    def failures(self) -> tuple[Check, ...]:
        return tuple(c for c in self.checks if not c.ok)

    def as_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "checks": [c.as_dict() for c in self.checks]}


@frozen(kw_only=True)
class GenerationInfo:
    """A published (or staged) generation of the index or the graph."""

    id: str
    created: str
    notes: int = 0
    chunks: int = 0
    vectors: int = 0
    model_id: str | None = None
    dimension: int | None = None
    schema_version: int = 0
    chunking: str | None = None  # how the notes were chunked (NoteSource.chunking)
    nodes: int = 0
    edges: int = 0
    manifest: Mapping[str, ManifestEntry] = field(factory=dict, repr=False, eq=False)


class RefreshMode(StrEnum):
    """What a refresh rebuilds; a caller asks for INDEX or FULL (ASKED_MODES), the server
    itself also refreshes the GRAPH alone and single PATHS (a write's notes)."""

    INDEX = "index"
    FULL = "full"  # the graph, then the index from scratch
    GRAPH = "graph"
    PATHS = "paths"


ASKED_MODES = (RefreshMode.INDEX, RefreshMode.FULL)


class Stage(StrEnum):
    """The two things a refresh builds."""

    INDEX = "index"
    GRAPH = "graph"


class StageOutcome(StrEnum):
    """What one stage of a refresh did; its value is what reports and histories say."""

    PUBLISHED = "published"  # a new generation serves
    UNCHANGED = "unchanged"  # nothing to do: the current generation serves
    KEPT_LAST_GOOD = "kept-last-good"  # the new one failed validation or its build
    SKIPPED = "skipped"  # not attempted (no graph builder, an index that cannot take paths)

    @property
    def ok(self) -> bool:
        return self is not StageOutcome.KEPT_LAST_GOOD

    @property
    def serves_current(self) -> bool:
        """The index serves the notes as they are now (published now, or already so)."""
        return self in (StageOutcome.PUBLISHED, StageOutcome.UNCHANGED)


@frozen(kw_only=True)
class StageReport:
    """Outcome of one stage (index or graph) of a refresh."""

    stage: Stage = field(converter=Stage)
    outcome: StageOutcome = field(converter=StageOutcome)
    generation: str | None = None
    previous: str | None = None
    reason: str = ""
    validation: ValidationReport | None = None
    # Notes added, changed (text) and removed against the generation replaced: what changed,
    # not what was re-read (a rebuild re-reads every note; `embedded` counts that work).
    added: int = 0
    changed: int = 0
    removed: int = 0
    embedded: int = 0
    reused_vectors: int = 0
    seconds: float = 0.0

    @classmethod
    def index_published(cls, replaced: GenerationInfo | None,
                        manifest: Mapping[str, ManifestEntry], **fields: Any) -> StageReport:
        """A published index stage, its counts what it changed in the notes it replaced."""
        moved = manifest_changes(replaced.manifest if replaced else {}, manifest)
        return cls(stage=Stage.INDEX, outcome=StageOutcome.PUBLISHED, added=len(moved.added),
                   changed=len(moved.changed), removed=len(moved.removed), **fields)

    @property
    def ok(self) -> bool:
        return self.outcome.ok

    def as_dict(self) -> dict[str, Any]:
        return {"stage": self.stage, "outcome": self.outcome, "generation": self.generation,
                "previous": self.previous, "reason": self.reason,
                "validation": self.validation.as_dict() if self.validation else None,
                "added": self.added, "changed": self.changed, "removed": self.removed,
                "embedded": self.embedded, "reused_vectors": self.reused_vectors,
                "seconds": round(self.seconds, 3)}


@frozen(kw_only=True)
class RefreshReport:
    mode: RefreshMode = field(converter=RefreshMode)
    stages: tuple[StageReport, ...]
    warnings: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return all(s.ok for s in self.stages)

    def stage(self, name: Stage) -> StageReport | None:
        return next((s for s in self.stages if s.stage == name), None)

    @property
    def index_generation(self) -> str | None:
        index = self.stage(Stage.INDEX)
        return index.generation if index else None

    @property
    def graph_generation(self) -> str | None:
        graph = self.stage(Stage.GRAPH)
        return graph.generation if graph else None

    def as_dict(self) -> dict[str, Any]:
        return {"mode": self.mode, "ok": self.ok,
                "index_generation": self.index_generation,
                "graph_generation": self.graph_generation,
                "stages": [s.as_dict() for s in self.stages],
                "warnings": list(self.warnings)}


@frozen(kw_only=True)
class SourceScan:
    """Every Markdown file under the root, plus warnings for what was skipped."""

    files: Mapping[str, SourceFile]
    warnings: tuple[str, ...] = ()


@frozen(kw_only=True)
class BuildProgress:
    """How far a running refresh has come, as any process on the root can read it."""

    stage: Stage = field(converter=Stage)
    done: int
    total: int
    pid: int | None = None  # the refreshing process, when another one

    def summary(self) -> str:
        where = f", by process {self.pid}" if self.pid else ""
        if self.stage is Stage.GRAPH:
            return f"building the graph first{where}"
        return f"{self.done:,} of {self.total:,} notes{where}"

    def describe(self) -> str:
        return f"index being built: {self.summary()}"


@frozen(kw_only=True)
class GraphLag:
    """Notes the index holds differently from the graph it serves next to it."""

    added: tuple[str, ...] = ()  # in the index, not in the graph
    removed: tuple[str, ...] = ()  # in the graph, gone from the index
    changed: tuple[str, ...] = ()  # in both, with other content

    @classmethod
    def between(cls, index: Mapping[str, str], graph: Mapping[str, str]) -> GraphLag:
        """Compare path -> content hash maps of the index and of the graph's sources."""
        return cls(added=tuple(sorted(p for p in index if p not in graph)),
                   removed=tuple(sorted(p for p in graph if p not in index)),
                   changed=tuple(sorted(p for p, h in index.items()
                                        if p in graph and graph[p] != h)))

    @property
    def behind(self) -> int:
        return len(self.added) + len(self.removed) + len(self.changed)

    @property
    def moved(self) -> bool:
        """Notes came or went (added, removed or moved): graph lookups by them fail."""
        return bool(self.added or self.removed)

    def describe(self) -> str:
        example = (self.added + self.removed + self.changed)[:1]
        return (f"graph behind index by {self.behind} notes "
                f"({len(self.added)} added, {len(self.removed)} removed, "
                f"{len(self.changed)} changed{', e.g. ' + example[0] if example else ''})")
