"""SqliteGenerations: the IndexGenerations port over one live SQLite database."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from memory.adapters.sqlite.collector import Collector
from memory.adapters.sqlite.index import SqliteIndex
from memory.adapters.sqlite.publisher import Publisher
from memory.adapters.sqlite.stage import SqliteIndexStage
from memory.domain.refresh import GenerationInfo, ManifestEntry
from memory.ports.index_generations import IndexGenerations, ReadSnapshot


class SqliteGenerations(IndexGenerations):
    """Generations as committed states of <state_dir>/index/index-<id>.sqlite."""

    def __init__(self, index: SqliteIndex):
        self._index = index
        self._publisher = Publisher(index)
        self._collector = Collector(index.layout)

    def current(self) -> GenerationInfo | None:
        return self._index.current()

    def stage(self, base: str | None) -> SqliteIndexStage:
        """base: the live generation, edited in place in one transaction; None: a new
        database built from nothing (a full refresh, or a rebuild after damage)."""
        return self._publisher.full() if base is None else self._publisher.incremental(base)

    def collect(self, keep: int, grace_seconds: float) -> list[str]:
        """Superseded states live in no file of their own, so `keep` has nothing to keep:
        what goes is files no reader needs once grace_seconds have passed."""
        return self._collector.collect(grace_seconds)

    def check_current(self) -> list[str]:
        return self._index.check_current()

    @contextmanager
    def snapshot(self) -> Iterator[ReadSnapshot]:
        """One WAL read transaction for the block, opened at once by reading its info."""
        with self._index.steady():
            yield ReadSnapshot(self._index.current())

    def manifest_of(self, generation: str) -> Mapping[str, ManifestEntry] | None:
        """The manifest of an earlier generation of the serving database, from the change
        log (the last schema.LOG_GENERATIONS generations); None when it is not there."""
        def find(view):
            row = view.conn.execute("SELECT seq FROM generations WHERE id = ?",
                                    (generation,)).fetchone()
            return row[0] if row else None
        database = self._index.serving()
        seq = self._index.read(find, None)
        return database.manifest(seq) if database is not None and seq is not None else None
