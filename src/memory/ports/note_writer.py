"""NoteWriter: the only way the core changes the memory root's Markdown, one file at a time."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from memory.domain.note_text import NoteFile


@runtime_checkable
class NoteWriter(Protocol):
    """Every change happens under the root's write lock; a refused or failed call leaves the
    root byte for byte as it was, and nothing is ever deleted.

    Any call may raise WriteBusy (the lock was held too long by another writer) and
    StoreError (the file system failed); paths are checked as `writable_note_path` does.
    """

    def read(self, path: str) -> NoteFile:
        """The note's current bytes and content_hash.

        NotFound if there is no file; InvalidRequest for a path outside the root, through a
        symbolic link, inside an excluded folder, or not a regular file.
        """

    def create(self, path: str, data: bytes) -> NoteFile:
        """Write a new note; NoteAlreadyExists if any file is at that path.

        Missing folders are made (and removed again if the write fails). The returned path
        may spell existing folders as they are spelled on disk.
        """

    def replace(self, path: str, data: bytes, *, expected_hash: str) -> NoteFile:
        """Swap the note's bytes for data, only if its content_hash is still expected_hash.

        EditConflict (with the current hash) if it changed; NotFound if it is gone.
        """

    def move(self, path: str, new_path: str, data: bytes, *, expected_hash: str) -> NoteFile:
        """Put the note at new_path with data, if unchanged (as replace) and new_path is free.

        EditConflict as replace; NoteAlreadyExists if any file is at new_path.
        """
