"""InMemoryArtifactStore and InMemoryArtifactReader: dict-backed raw records for unit tests.

The reader's files are lists of records; its "bytes" are records, so an offset counts them.
A record given as the string MALFORMED stands for a line that is not JSON.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence

from memory.domain.artifacts import (Batch, BatchRefused, Change, CheckReport, Conversation,
                                     FileRead, IngestedFile, Message, RawRecord, Stored,
                                     change_of, check_extent, content_digest, scope_change)
from memory.domain.errors import InvalidRequest, NotFound
from memory.ports.artifact_reader import ArtifactReader
from memory.ports.artifact_store import ArtifactStore

MALFORMED = "MALFORMED"


class InMemoryArtifactStore(ArtifactStore):
    def __init__(self) -> None:
        self.conversations: dict[tuple[str, str], Conversation] = {}
        self.messages: dict[tuple[str, str, int], list[Message]] = {}  # revisions, oldest first
        self.files: dict[tuple[str, str], IngestedFile] = {}
        self.copies: dict[str, tuple] = {}
        self.stores = 0  # transactions committed

    def ingested(self, source: str, path: str) -> IngestedFile | None:
        return self.files.get((source, path))

    def store(self, batch: Batch, file: IngestedFile, revising: bool,
              read_from: IngestedFile | None) -> Stored:
        check_extent(self.files.get((file.source, file.path)), read_from, file.path)
        conversations, messages = dict(self.conversations), copy.deepcopy(self.messages)
        for conversation in batch.conversations:  # work on copies: all or nothing
            key = (conversation.source, conversation.conversation)
            scope_change(conversations.get(key), conversation, revising, "the batch")
            conversations[key] = conversation
        counts = {change: 0 for change in Change}
        for message in batch.messages:
            held = messages.get(message.key)
            change = change_of(held[-1].digest if held else None, message, revising,
                               batch.positions[message.key])
            counts[change] += 1
            if change is not Change.UNCHANGED:
                messages.setdefault(message.key, []).append(message)
        self.conversations, self.messages = conversations, messages
        self.files[(file.source, file.path)] = file
        self.stores += 1
        return Stored(new=counts[Change.NEW], unchanged=counts[Change.UNCHANGED],
                      revised=counts[Change.REVISED])

    def check(self) -> CheckReport:
        return CheckReport(conversations=len(self.conversations),
                           records=sum(len(v) for v in self.messages.values()))

    def backup(self, dest: str) -> str:
        self.copies[dest] = copy.deepcopy((self.conversations, self.messages, self.files))
        return content_digest({"copy": dest})

    def restore(self, src: str) -> CheckReport:
        if src not in self.copies:
            raise InvalidRequest(f"no copy {src}")
        self.conversations, self.messages, self.files = copy.deepcopy(self.copies[src])
        return self.check()


class InMemoryArtifactReader(ArtifactReader):
    def __init__(self, files: dict[str, list[dict | str]] | None = None) -> None:
        self.contents = files if files is not None else {}

    def files(self, paths: Sequence[str]) -> tuple[str, ...]:
        found = []
        for path in paths:
            under = sorted(p for p in self.contents if p == path or p.startswith(path.rstrip("/") + "/"))
            if not under:
                raise NotFound(f"no file or folder {path}")
            found.extend(under)
        return tuple(dict.fromkeys(found))

    def prefix_digest(self, path: str, size: int) -> str | None:
        records = self._records(path)
        return _digest(records[:size]) if len(records) >= size else None

    def read(self, path: str, offset: int = 0, lines: int = 0) -> FileRead:
        records = self._records(path)
        raw = []
        for number, record in enumerate(records[offset:], offset + 1):
            if not isinstance(record, dict):
                raise BatchRefused(f"{path}:{number}", "not valid JSON")
            raw.append(RawRecord(where=f"{path}:{number}", fields=record))
        return FileRead(path=path, records=tuple(raw), size=len(records), lines=len(records),
                        digest=_digest(records))

    def _records(self, path: str) -> list[dict | str]:
        if path not in self.contents:
            raise NotFound(f"no file {path}")
        return self.contents[path]


def _digest(records: Sequence[dict | str]) -> str:
    return content_digest({"records": json.dumps(list(records), sort_keys=True)})
