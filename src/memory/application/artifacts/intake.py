"""Intake: each source file read from where its last batch ended, validated whole, stored in
one transaction; a file whose stored prefix changed was rewritten and is read again as a
revision, never duplicated."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from attrs import frozen

from memory.domain.artifacts import (BatchRefused, IngestedFile, IngestRaced, Stored,
                                     validate_batch)
from memory.ports.artifact_reader import ArtifactReader
from memory.ports.artifact_store import ArtifactStore

Progress = Callable[[int, int, str], None]  # (file number, files, path)
RACE_RETRIES = 3


@frozen(kw_only=True)
class FileOutcome:
    path: str
    conversations: int = 0
    stored: Stored = Stored()
    repeated: int = 0  # records given twice in the batch with the same content
    rewritten: bool = False
    refused: str | None = None
    note: str | None = None  # a last line not yet complete, or other ingests at work


@frozen(kw_only=True)
class IntakeSummary:
    source: str
    files: tuple[FileOutcome, ...]

    @property
    def conversations(self) -> int:
        return sum(f.conversations for f in self.files)

    @property
    def records(self) -> int:
        """Records stored by this intake: new ones and new revisions."""
        return sum(f.stored.new + f.stored.revised for f in self.files)

    @property
    def skipped(self) -> int:
        return sum(f.stored.unchanged + f.repeated for f in self.files)

    @property
    def refused(self) -> int:
        return sum(f.refused is not None for f in self.files)

    @property
    def warnings(self) -> tuple[str, ...]:
        said = []
        for f in self.files:
            if f.rewritten:
                said.append(f"{f.path} was rewritten since it was last ingested: read again "
                            f"whole, {f.stored.revised} records stored as new revisions")
            if f.note:
                said.append(f.note)
            if f.refused:
                said.append(f"refused: {f.refused}")
        return tuple(said)


class ArtifactIntake:
    def __init__(self, reader: ArtifactReader, store: ArtifactStore):
        self._reader = reader
        self._store = store

    def ingest(self, source: str, paths: Sequence[str],
               progress: Progress | None = None) -> IntakeSummary:
        files = self._reader.files(paths)
        outcomes = []
        for number, path in enumerate(files, 1):
            if progress is not None:
                progress(number, len(files), path)
            outcomes.append(self._outcome(source, path))
        return IntakeSummary(source=source, files=tuple(outcomes))

    def _outcome(self, source: str, path: str) -> FileOutcome:
        try:
            for _ in range(RACE_RETRIES):
                try:
                    return self._ingest_file(source, path)
                except IngestRaced:  # another ingest stored the file first: read on from there
                    continue
        except BatchRefused as refused:
            return FileOutcome(path=path, refused=str(refused))
        return FileOutcome(path=path, note=f"{path} is being ingested by other processes: "
                                           f"what they have not stored is read next time")

    def _ingest_file(self, source: str, path: str) -> FileOutcome:
        known = self._store.ingested(source, path)
        rewritten = known is not None and \
            self._reader.prefix_digest(path, known.size) != known.digest
        start = known if known is not None and not rewritten else None
        read = self._reader.read(path, start.size if start else 0, start.lines if start else 0)
        if start is not None and read.size == start.size:
            return FileOutcome(path=path, note=read.left)  # nothing grew
        batch = validate_batch(source, read.records)
        revision = (known.revision if known else 0) + rewritten
        extent = IngestedFile(source=source, path=path, size=read.size, lines=read.lines,
                              digest=read.digest, revision=revision)
        stored = self._store.store(batch, extent, revising=rewritten, read_from=known)
        return FileOutcome(path=path, conversations=len(batch.conversations), stored=stored,
                           repeated=batch.repeated, rewritten=rewritten, note=read.left)
