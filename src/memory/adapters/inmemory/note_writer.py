"""InMemoryNoteWriter and InMemoryNoteHistory: a memory root as a dict, and the commits made."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from memory.domain.capture_errors import NoteAlreadyExists
from memory.domain.errors import NotFound
from memory.domain.file_names import writable_note_path
from memory.domain.new_note import Author
from memory.domain.note_text import ContentKey, NoteFile, check_hash
from memory.domain.notes import note_path
from memory.ports.errors import StoreError
from memory.ports.note_history import HistoryError, NoteHistory
from memory.ports.note_writer import NoteWriter

TEST_KEY = ContentKey(b"in-memory content key, for tests.")


class InMemoryNoteWriter(NoteWriter):
    """Files by relative path; `calls` records each call, `failing` paths fail like a full disk."""

    def __init__(self, files: dict[str, bytes] | None = None, *, key: ContentKey = TEST_KEY):
        self.key = key
        self.files: dict[str, bytes] = dict(files or {})
        self.calls: list[tuple[str, str]] = []
        self.failing: set[str] = set()
        self._lock = threading.Lock()

    def read(self, path: str) -> NoteFile:
        rel = note_path(path)
        with self._lock:
            return NoteFile.of(rel, self._current(rel), self.key)

    def create(self, path: str, data: bytes) -> NoteFile:
        rel = self._called("create", path, new=True)
        with self._lock:
            if rel in self.files:
                raise NoteAlreadyExists(rel)
            self.files[rel] = data
        return NoteFile.of(rel, data, self.key)

    def replace(self, path: str, data: bytes, *, expected_hash: str) -> NoteFile:
        rel = self._called("replace", path)
        with self._lock:
            check_hash(rel, expected_hash, self.key.hash(self._current(rel)))
            self.files[rel] = data
        return NoteFile.of(rel, data, self.key)

    def move(self, path: str, new_path: str, data: bytes, *, expected_hash: str) -> NoteFile:
        rel = self._called("move", path)
        new_rel = self._called("move-to", new_path, new=True)
        with self._lock:
            current = self._current(rel)
            if new_rel in self.files:
                raise NoteAlreadyExists(new_rel)
            check_hash(rel, expected_hash, self.key.hash(current))
            del self.files[rel]
            self.files[new_rel] = data
        return NoteFile.of(new_rel, data, self.key)

    def _called(self, what: str, path: str, *, new: bool = False) -> str:
        rel = writable_note_path(path) if new else note_path(path)
        self.calls.append((what, rel))
        if rel in self.failing:
            raise StoreError(f"cannot write {rel}: simulated failure")
        return rel

    def _current(self, rel: str) -> bytes:
        try:
            return self.files[rel]
        except KeyError:
            raise NotFound(f"no note at {rel}") from None


class InMemoryNoteHistory(NoteHistory):
    """Commits as (paths, message, author name); `failing` makes every record fail."""

    def __init__(self):
        self.commits: list[tuple[tuple[str, ...], str, str]] = []
        self.failing = False

    def record(self, paths: Sequence[str], message: str, author: Author) -> str:
        if self.failing:
            raise HistoryError("simulated: not a git work tree")
        self.commits.append((tuple(paths), message, author.name))
        return f"commit-{len(self.commits)}"
