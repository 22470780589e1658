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
from contextlib import ExitStack, contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from memory.adapters.markdown.atomic_files import Folder, LinkOnTheWay, remove_made, walked
from memory.adapters.markdown.process_key import PROCESS_KEY
from memory.domain.capture_errors import NoteAlreadyExists, WriteBusy
from memory.domain.errors import InvalidRequest, NotFound
from memory.domain.file_names import writable_note_path
from memory.domain.note_text import ContentKey, NoteFile, check_hash
from memory.domain.notes import note_path
from memory.ports.errors import StoreError
from memory.ports.note_writer import NoteWriter

STATE_FOLDER = ".ai-memory"
Rename = Callable[[Folder, str, str], None]


class MarkdownNoteWriter(NoteWriter):
    """Writes `.md` files under root; the lock is `<root>/.ai-memory/locks/write.lock` unless
    given, so every server and CLI on one root shares it whatever its state folder.

    Every file step is taken relative to folder handles opened from the root without
    following a link (atomic_files), so a folder swapped for a link between the checks and
    the write cannot send the write anywhere else: it lands in the folder that was checked,
    or is refused.
    """

    def __init__(self, root: str | os.PathLike[str], *, key: ContentKey = PROCESS_KEY,
                 lock_path: str | os.PathLike[str] | None = None,
                 excluded: Sequence[str | os.PathLike[str]] = (),
                 lock_timeout_s: float = 10.0, max_file_bytes: int = 2_000_000):
        self._root = Path(os.path.realpath(os.fspath(root)))
        self._key = key
        self._lock_path = Path(lock_path) if lock_path else \
            self._root / STATE_FOLDER / "locks" / "write.lock"
        self._excluded = tuple(Path(os.path.realpath(os.fspath(p))) for p in excluded)
        self._timeout = lock_timeout_s
        self._max_file_bytes = max_file_bytes

    # -- the port --------------------------------------------------------------------------

    def read(self, path: str) -> NoteFile:
        rel, names = self._resolve(path)
        with self._folder(rel, names[:-1]) as (folder, _):
            return NoteFile.of(rel, self._read(rel, folder, names[-1]), self._key)

    def create(self, path: str, data: bytes) -> NoteFile:
        self._resolve(path, new=True)  # a refused path never even takes the lock
        with self._lock():
            rel, names = self._resolve(path, new=True)
            with self._folder(rel, names[:-1], make=True) as (folder, made):
                try:
                    self._put_new(rel, folder, names[-1], data)
                except BaseException:
                    remove_made(made)
                    raise
        return NoteFile.of(rel, data, self._key)

    def replace(self, path: str, data: bytes, *, expected_hash: str) -> NoteFile:
        self._resolve(path)
        with self._lock():
            rel, names = self._resolve(path)
            with self._folder(rel, names[:-1]) as (folder, _):
                name = names[-1]
                self._read(rel, folder, name)  # NotFound before a temporary file is made
                self._install(rel, folder, name, data, Folder.replace,
                              mode=_mode(folder, name),
                              check=lambda: self._unchanged(rel, folder, name, expected_hash))
        return NoteFile.of(rel, data, self._key)

    def move(self, path: str, new_path: str, data: bytes, *, expected_hash: str) -> NoteFile:
        self._resolve(path), self._resolve(new_path, new=True)
        with self._lock():
            rel, names = self._resolve(path)
            new_rel, new_names = self._resolve(new_path, new=True)
            if os.path.normcase("/".join(names)) == os.path.normcase("/".join(new_names)):
                raise InvalidRequest(f"{rel} is already at {new_path}")
            with self._folder(rel, names[:-1]) as (old, _):
                self._read(rel, old, names[-1])
                with self._folder(new_rel, new_names[:-1], make=True) as (new, made):
                    try:
                        self._move(rel, old, names[-1], new_rel, new, new_names[-1], data,
                                   expected_hash)
                    except BaseException:
                        remove_made(made)
                        raise
        return NoteFile.of(new_rel, data, self._key)

    # -- steps -----------------------------------------------------------------------------

    def _put_new(self, rel: str, folder: Folder, name: str, data: bytes) -> None:
        if folder.lstat(name) is not None:
            raise NoteAlreadyExists(rel)
        self._install(rel, folder, name, data, Folder.rename_no_replace)

    def _move(self, rel: str, old: Folder, name: str, new_rel: str, new: Folder,
              new_name: str, data: bytes, expected_hash: str) -> None:
        if new.lstat(new_name) is not None:
            raise NoteAlreadyExists(new_rel)
        self._install(new_rel, new, new_name, data, Folder.rename_no_replace,
                      mode=_mode(old, name),
                      check=lambda: self._unchanged(rel, old, name, expected_hash))
        try:
            old.unlink(name)  # the old name only: its bytes now live at the new one
        except OSError as e:
            try:
                new.unlink(new_name)  # undo: one note, at its old path, as it was
            except OSError:
                raise StoreError(f"moving {rel}: the note is at both {rel} and {new_rel} "
                                 f"({e.strerror or e}); remove one by hand") from e
            raise StoreError(f"cannot move {rel}: {e.strerror or e}") from e
        old.sync()

    def _install(self, rel: str, folder: Folder, name: str, data: bytes, rename: Rename, *,
                 mode: int | None = None, check: Callable[[], None] | None = None) -> None:
        """Data synced to a temporary file beside the note, then `check` (the hash rule)
        right before `rename` puts it at the note's name; the temporary file never stays."""
        try:
            temp = folder.write_temp(name, data, mode=mode)
        except OSError as e:
            raise StoreError(f"cannot write {rel}: {e.strerror or e}") from e
        try:
            if check is not None:
                check()
            self._io(rel, lambda: rename(folder, temp, name))
        finally:
            folder.discard(temp)
        folder.sync()

    def _unchanged(self, rel: str, folder: Folder, name: str, expected_hash: str) -> None:
        check_hash(rel, expected_hash, self._key.hash(self._read(rel, folder, name)))

    def _io(self, rel: str, step) -> None:
        try:
            step()
        except FileExistsError:
            raise NoteAlreadyExists(rel) from None
        except OSError as e:
            raise StoreError(f"cannot write {rel}: {e.strerror or e}") from e

    @contextmanager
    def _folder(self, rel: str, names: Sequence[str], *,
                make: bool = False) -> Iterator[tuple[Folder, list[tuple[Folder, str]]]]:
        """The note's folder, opened name by name from the root without following a link;
        only the walk's own failures are translated here, not those of the steps inside."""
        stack = ExitStack()
        try:
            opened = stack.enter_context(walked(self._root, names, make=make))
        except LinkOnTheWay as e:
            raise self._linked(rel, Path(e.filename)) from None
        except (FileNotFoundError, NotADirectoryError):
            if make:
                raise StoreError(f"cannot create the folder of {rel}: a file is in the way "
                                 "or a folder went away") from None
            raise NotFound(f"no note at {rel}") from None
        except OSError as e:
            what = "create the folder of" if make else "read"
            raise StoreError(f"cannot {what} {rel}: {e.strerror or e}") from e
        with stack:
            yield opened

    def _read(self, rel: str, folder: Folder, name: str) -> bytes:
        try:
            data, _ = folder.read(name, self._max_file_bytes + 1)
        except LinkOnTheWay:
            raise self._linked(rel, folder.path / name) from None
        except IsADirectoryError:
            raise InvalidRequest(f"{rel} is not a regular file") from None
        except (FileNotFoundError, NotADirectoryError):
            raise NotFound(f"no note at {rel}") from None
        except OSError as e:
            raise StoreError(f"cannot read {rel}: {e.strerror or e}") from e
        if len(data) > self._max_file_bytes:
            raise InvalidRequest(f"{rel} is over the {self._max_file_bytes}-byte limit")
        return data

    # -- where -----------------------------------------------------------------------------

    def _linked(self, rel: str, where: Path) -> InvalidRequest:
        try:
            shown = where.relative_to(self._root).as_posix()
        except ValueError:
            shown = where.name
        return InvalidRequest(f"{rel}: {shown} is a symbolic link; write to where it points "
                              "instead")

    def _resolve(self, path: str, *, new: bool = False) -> tuple[str, list[str]]:
        """The checked relative path and its names on disk; no symbolic link on the way
        now (the walk by folder handles keeps it so until the write is done).

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
                raise self._linked(rel, current)
        if any(current == ex or ex in current.parents for ex in self._excluded):
            raise InvalidRequest(f"{rel} is inside a folder ai-memory keeps its own state in")
        return rel, rel.split("/")

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


def _mode(folder: Folder, name: str) -> int | None:
    """The note's permission bits, for the file that replaces it."""
    info = folder.lstat(name)
    return stat.S_IMODE(info.st_mode) if info is not None else None


def _listing(folder: Path) -> list[str]:
    try:
        return os.listdir(folder)
    except OSError:
        return []
