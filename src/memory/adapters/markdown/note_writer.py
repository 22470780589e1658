"""MarkdownNoteWriter: atomic note writes under the memory root, one writer at a time.

Every change takes the root's write lock (an OS file lock, dropped by the kernel when its
holder dies), writes a synced temporary file beside the note, checks the note's hash one
last time and renames. An editor that saves without our lock in the instant between that
check and the rename is the one lost update no file system API lets us rule out.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from memory.adapters.markdown.atomic_files import (discard, make_folders, remove_folders,
                                                   rename_no_replace, replace_file,
                                                   sync_folder, write_temp)
from memory.domain.capture_errors import NoteAlreadyExists, WriteBusy
from memory.domain.errors import InvalidRequest, NotFound
from memory.domain.file_names import writable_note_path
from memory.domain.note_text import NoteFile, check_hash, file_hash
from memory.domain.notes import note_path
from memory.ports.errors import StoreError
from memory.ports.note_writer import NoteWriter

STATE_FOLDER = ".ai-memory"


class MarkdownNoteWriter(NoteWriter):
    """Writes `.md` files under root; the lock is `<root>/.ai-memory/locks/write.lock` unless
    given, so every server and CLI on one root shares it whatever its state folder."""

    def __init__(self, root: str | os.PathLike[str], *,
                 lock_path: str | os.PathLike[str] | None = None,
                 excluded: Sequence[str | os.PathLike[str]] = (),
                 lock_timeout_s: float = 10.0, max_file_bytes: int = 2_000_000):
        self._root = Path(os.path.realpath(os.fspath(root)))
        self._lock_path = Path(lock_path) if lock_path else \
            self._root / STATE_FOLDER / "locks" / "write.lock"
        self._excluded = tuple(Path(os.path.realpath(os.fspath(p))) for p in excluded)
        self._timeout = lock_timeout_s
        self._max_file_bytes = max_file_bytes

    # -- the port --------------------------------------------------------------------------

    def read(self, path: str) -> NoteFile:
        rel, real = self._resolve(path)
        return NoteFile.of(rel, self._read(rel, real))

    def create(self, path: str, data: bytes) -> NoteFile:
        self._resolve(path, new=True)  # a refused path never even takes the lock
        with self._lock():
            rel, real = self._resolve(path, new=True)
            made = self._folders(rel, real.parent)
            try:
                self._put_new(rel, real, data)
            except BaseException:
                remove_folders(made)
                raise
        return NoteFile.of(rel, data)

    def replace(self, path: str, data: bytes, *, expected_hash: str) -> NoteFile:
        self._resolve(path)
        with self._lock():
            rel, real = self._resolve(path)
            self._read(rel, real)  # NotFound before a temporary file is made
            self._install(rel, real, data, replace_file, mode_of=real,
                          check=lambda: self._unchanged(rel, real, expected_hash))
        return NoteFile.of(rel, data)

    def move(self, path: str, new_path: str, data: bytes, *, expected_hash: str) -> NoteFile:
        self._resolve(path), self._resolve(new_path, new=True)
        with self._lock():
            rel, real = self._resolve(path)
            new_rel, new_real = self._resolve(new_path, new=True)
            if os.path.normcase(real) == os.path.normcase(new_real):
                raise InvalidRequest(f"{rel} is already at {new_path}")
            self._read(rel, real)
            made = self._folders(new_rel, new_real.parent)
            try:
                self._move(rel, real, new_rel, new_real, data, expected_hash)
            except BaseException:
                remove_folders(made)
                raise
        return NoteFile.of(new_rel, data)

    # -- steps -----------------------------------------------------------------------------

    def _put_new(self, rel: str, real: Path, data: bytes) -> None:
        if os.path.lexists(real):
            raise NoteAlreadyExists(rel)
        self._install(rel, real, data, rename_no_replace)

    def _move(self, rel: str, real: Path, new_rel: str, new_real: Path, data: bytes,
              expected_hash: str) -> None:
        self._put_checked(rel, real, new_rel, new_real, data, expected_hash)
        try:
            os.unlink(real)  # the old name only: its bytes now live at the new one
        except OSError as e:
            try:
                os.unlink(new_real)  # undo: one note, at its old path, as it was
            except OSError:
                raise StoreError(f"moving {rel}: the note is at both {rel} and {new_rel} "
                                 f"({e.strerror or e}); remove one by hand") from e
            raise StoreError(f"cannot move {rel}: {e.strerror or e}") from e
        sync_folder(real.parent)

    def _put_checked(self, rel: str, real: Path, new_rel: str, new_real: Path, data: bytes,
                     expected_hash: str) -> None:
        if os.path.lexists(new_real):
            raise NoteAlreadyExists(new_rel)
        self._install(new_rel, new_real, data, rename_no_replace, mode_of=real,
                      check=lambda: self._unchanged(rel, real, expected_hash))

    def _install(self, rel: str, target: Path, data: bytes,
                 rename: Callable[[Path, Path], None], *, mode_of: Path | None = None,
                 check: Callable[[], None] | None = None) -> None:
        """Data synced to a temporary file beside target, then `check` (the hash rule) right
        before `rename` puts it at target; the temporary file never stays."""
        try:
            temp = write_temp(target, data, mode_of=mode_of)
        except OSError as e:
            raise StoreError(f"cannot write {rel}: {e.strerror or e}") from e
        try:
            if check is not None:
                check()
            self._io(rel, lambda: rename(temp, target))
        finally:
            discard(temp)
        sync_folder(target.parent)

    def _unchanged(self, rel: str, real: Path, expected_hash: str) -> None:
        check_hash(rel, expected_hash, file_hash(self._read(rel, real)))

    def _io(self, rel: str, step) -> None:
        try:
            step()
        except FileExistsError:
            raise NoteAlreadyExists(rel) from None
        except OSError as e:
            raise StoreError(f"cannot write {rel}: {e.strerror or e}") from e

    def _folders(self, rel: str, folder: Path) -> list[Path]:
        try:
            return make_folders(self._root, folder)
        except OSError as e:
            raise StoreError(f"cannot create the folder of {rel}: {e.strerror or e}") from e

    def _read(self, rel: str, real: Path) -> bytes:
        try:
            info = os.stat(real, follow_symlinks=False)
            if not stat.S_ISREG(info.st_mode):
                raise InvalidRequest(f"{rel} is not a regular file")
            if info.st_size > self._max_file_bytes:
                raise InvalidRequest(f"{rel} is over the {self._max_file_bytes}-byte limit")
            with open(real, "rb") as handle:
                return handle.read(self._max_file_bytes + 1)
        except (FileNotFoundError, NotADirectoryError):
            raise NotFound(f"no note at {rel}") from None
        except OSError as e:
            raise StoreError(f"cannot read {rel}: {e.strerror or e}") from e

    # -- where -----------------------------------------------------------------------------

    def _resolve(self, path: str, *, new: bool = False) -> tuple[str, Path]:
        """The checked relative path and its place on disk; no symbolic link on the way.

        A new name (`new`) must be valid everywhere; an existing note only has to be a
        note inside the root, so notes named before these rules stay editable.
        """
        rel = writable_note_path(path) if new else note_path(path)
        if not self._root.is_dir():
            raise NotFound(f"memory root is not a directory: {self._root}")
        if new:
            rel = self._spelled(rel)
        current = self._root
        for part in rel.split("/"):
            current = current / part
            if current.is_symlink():
                raise InvalidRequest(f"{rel}: {current.relative_to(self._root).as_posix()} is "
                                     "a symbolic link; write to where it points instead")
        if any(current == ex or ex in current.parents for ex in self._excluded):
            raise InvalidRequest(f"{rel} is inside a folder ai-memory keeps its own state in")
        return rel, current

    def _spelled(self, rel: str) -> str:
        """Existing folders as spelled on disk (`repos/` for `Repos/`), so a case-insensitive
        file system and the index agree on the note's path."""
        parts, current = rel.split("/"), self._root
        for i, part in enumerate(parts[:-1]):
            names = _listing(current)
            if part not in names:
                same = [n for n in names
                        if n.casefold() == part.casefold() and (current / n).is_dir()]
                parts[i] = same[0] if len(same) == 1 else part
            current = current / parts[i]
        return "/".join(parts)

    @contextmanager
    def _lock(self) -> Iterator[None]:
        self._prepare_lock()
        # A fresh lock per call: each holds its own descriptor, so threads exclude each other.
        lock = FileLock(str(self._lock_path), timeout=self._timeout)
        try:
            lock.acquire()
        except Timeout as e:
            raise WriteBusy(f"another writer held {self._lock_path} for over "
                            f"{self._timeout:g}s; try again") from e
        try:
            yield
        finally:
            lock.release()

    def _prepare_lock(self) -> None:
        state = self._root / STATE_FOLDER
        try:
            fresh = not state.exists() and self._lock_path.is_relative_to(state)
            self._lock_path.parent.mkdir(parents=True, exist_ok=True)
            if fresh:  # keep our folder out of git, as the state folder does
                with open(state / ".gitignore", "x", encoding="utf-8") as handle:
                    handle.write("*\n")
        except FileExistsError:
            pass
        except OSError as e:
            raise StoreError(f"cannot create the write lock {self._lock_path}: {e}") from e


def _listing(folder: Path) -> list[str]:
    try:
        return os.listdir(folder)
    except OSError:
        return []
