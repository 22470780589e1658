"""ArtifactStore: the canonical store of raw records (conversations and their messages)."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from memory.domain.artifacts import Batch, CheckReport, IngestedFile, Stored


@runtime_checkable
class ArtifactStore(Protocol):
    def ingested(self, source: str, path: str) -> IngestedFile | None:
        """How much of this source file is stored, None if nothing of it is."""

    def store(self, batch: Batch, file: IngestedFile, revising: bool,
              read_from: IngestedFile | None) -> Stored:
        """Store a validated batch and the file's new extent in one transaction; a message
        already stored with other content is refused (BatchRefused, nothing stored) unless
        `revising` (the file was rewritten), when it becomes a new revision. IngestRaced,
        nothing stored, if the file's stored extent is no longer `read_from` (what the
        batch was read after: another ingest stored the file meanwhile)."""

    def check(self) -> CheckReport:
        """Recompute every record's digest and the database's own integrity."""

    def backup(self, dest: str) -> str:
        """Write a checked copy to `dest` and its sha256 beside it (`dest`.sha256); return
        the digest. StoreError if the copy fails its check."""

    def restore(self, src: str) -> CheckReport:
        """Replace the store with a copy made by backup, once the copy matches its digest and
        passes check; InvalidRequest (nothing changed) otherwise."""
