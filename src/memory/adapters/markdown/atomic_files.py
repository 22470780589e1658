"""File-system steps of a note read or write, each taken relative to an open folder handle.

A path is walked from the root one name at a time, each folder opened without following a
symbolic link (O_NOFOLLOW | O_DIRECTORY), and every later step (read, temporary file,
rename, unlink) names its file relative to that handle. A folder swapped for a link after
the writer's checks therefore cannot redirect anything: the step lands in the folder that
was opened, or fails with ELOOP. A temporary file is hidden (a leading dot) so the scanner
and the watcher never see it. Windows has no folder handles: there each step goes by path
after a check for links, as atomic as the write lock makes it.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

WINDOWS = os.name == "nt"
HANDLES = not WINDOWS and all(hasattr(os, f) for f in ("O_NOFOLLOW", "O_DIRECTORY")) and \
    os.open in os.supports_dir_fd and os.link in os.supports_dir_fd
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
FOLDER_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | NOFOLLOW
READ_FLAGS = os.O_RDONLY | NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
NEW_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW | getattr(os, "O_BINARY", 0)
# Antivirus and search indexers hold files open for a moment on Windows; a rename then fails.
RENAME_TRIES, RENAME_PAUSE_S = 20, 0.05
NO_HARD_LINKS = {errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK,
                 errno.ENOSYS}


class LinkOnTheWay(OSError):
    """A name on the way to a note is a symbolic link (or became one during the call)."""


def _retrying(step: Callable[[], None]) -> None:
    for attempt in range(RENAME_TRIES):
        try:
            return step()
        except PermissionError:
            if not WINDOWS or attempt == RENAME_TRIES - 1:
                raise
            time.sleep(RENAME_PAUSE_S)


def _no_link(error: OSError, path: Path, is_link: Callable[[], bool]) -> OSError:
    """An O_NOFOLLOW open of a link fails with ELOOP (ENOTDIR with O_DIRECTORY on Linux):
    say that the name is a link."""
    if error.errno == errno.ELOOP or (error.errno == errno.ENOTDIR and is_link()):
        return LinkOnTheWay(errno.ELOOP, "is a symbolic link", str(path))
    return error


class Folder:
    """One open folder under the memory root; `path` is where it was when it was opened,
    for messages (and, without handles, for the steps themselves)."""

    def __init__(self, path: Path, fd: int | None):
        self.path = path
        self._fd = fd

    @classmethod
    def open(cls, path: Path) -> Folder:
        """The folder at path, trusted as it is (the root): later steps go below it."""
        return cls(path, os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
                   if HANDLES else None)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def _at(self, name: str) -> tuple[str, dict]:
        """(what to name, keyword arguments) of a step on `name` in this folder."""
        if self._fd is None:
            return str(self.path / name), {}
        return name, {"dir_fd": self._fd}

    def _is_link(self, name: str) -> bool:
        try:
            info = self.lstat(name)
        except OSError:
            return False
        return info is not None and stat.S_ISLNK(info.st_mode)

    def _check_link(self, name: str) -> None:
        if self._fd is None and os.path.islink(self.path / name):
            raise LinkOnTheWay(errno.ELOOP, "is a symbolic link", str(self.path / name))

    # -- folders ---------------------------------------------------------------------------

    def child(self, name: str) -> Folder:
        """The folder `name` in this one, never through a link (LinkOnTheWay if it is one)."""
        self._check_link(name)
        where, at = self._at(name)
        try:
            fd = os.open(where, FOLDER_FLAGS, **at) if self._fd is not None else None
        except OSError as e:
            raise _no_link(e, self.path / name, lambda: self._is_link(name)) from None
        if fd is None and not os.path.isdir(where):
            raise NotADirectoryError(errno.ENOTDIR, "not a folder", where)
        return Folder(self.path / name, fd)

    def make(self, name: str) -> bool:
        """Create the folder `name` here; False when it is already there."""
        where, at = self._at(name)
        try:
            os.mkdir(where, **at)
        except FileExistsError:
            return False
        return True

    def remove(self, name: str) -> None:
        """Remove the folder `name` here if it is empty (a folder a failed write made)."""
        where, at = self._at(name)
        os.rmdir(where, **at)

    def sync(self) -> None:
        """Make a rename in this folder durable; Windows has no handles to sync."""
        if self._fd is None:
            return
        try:
            os.fsync(self._fd)
        except OSError:
            pass  # some file systems cannot sync a directory; the rename itself happened

    # -- files -----------------------------------------------------------------------------

    def lstat(self, name: str) -> os.stat_result | None:
        """What `name` here is, not following a link; None when there is nothing."""
        where, at = self._at(name)
        try:
            return os.stat(where, follow_symlinks=False, **at)
        except FileNotFoundError:
            return None

    def read(self, name: str, limit: int) -> tuple[bytes, os.stat_result]:
        """Up to limit bytes of the regular file `name` here (never through a link), and its
        stat; IsADirectoryError for anything that is not a regular file."""
        self._check_link(name)
        where, at = self._at(name)
        try:
            fd = os.open(where, READ_FLAGS, **at)
        except OSError as e:
            raise _no_link(e, self.path / name, lambda: self._is_link(name)) from None
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise IsADirectoryError(errno.EISDIR, "not a regular file", where)
            return handle.read(limit), info

    def write_temp(self, beside: str, data: bytes, *, mode: int | None = None) -> str:
        """A hidden file next to `beside` holding data, flushed to disk; its name here."""
        temp = f".{beside}.{secrets.token_hex(6)}.tmp"
        where, at = self._at(temp)
        fd = os.open(where, NEW_FLAGS, 0o666, **at)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
                if mode is not None and hasattr(os, "fchmod"):
                    os.fchmod(handle.fileno(), mode)  # keep the note's mode
        except BaseException:
            self.discard(temp)
            raise
        if mode is not None and not hasattr(os, "fchmod"):
            try:
                os.chmod(where, mode)
            except OSError:
                pass
        return temp

    def discard(self, name: str) -> None:
        """Remove a temporary file this module made, if it is still there."""
        try:
            self.unlink(name)
        except FileNotFoundError:
            pass

    def unlink(self, name: str) -> None:
        where, at = self._at(name)
        os.unlink(where, **at)

    def replace(self, temp: str, name: str) -> None:
        """Put temp at name, replacing what is there (a link there is replaced, not followed)."""
        source, at = self._at(temp)
        target, _ = self._at(name)
        moves = {"src_dir_fd": self._fd, "dst_dir_fd": self._fd} if at else {}
        _retrying(lambda: os.replace(source, target, **moves))

    def rename_no_replace(self, temp: str, name: str) -> None:
        """Give temp the name `name`; FileExistsError, changing nothing, if it exists.

        A hard link fails atomically on an existing name; Windows' rename already refuses
        one. Where hard links are not supported, the check and the rename are only as
        atomic as the write lock makes them.
        """
        source, at = self._at(temp)
        target, _ = self._at(name)
        if WINDOWS:
            return _retrying(lambda: os.rename(source, target))
        moves = {"src_dir_fd": self._fd, "dst_dir_fd": self._fd} if at else {}
        try:
            os.link(source, target, follow_symlinks=False, **moves)
        except FileExistsError:
            raise
        except OSError as e:
            if e.errno not in NO_HARD_LINKS:
                raise
            if self.lstat(name) is not None:
                raise FileExistsError(errno.EEXIST, "file exists", target) from None
            os.rename(source, target, **moves)
            return
        self.unlink(temp)


@contextmanager
def walked(root: Path, names: Sequence[str], *, make: bool = False) -> Iterator[
        tuple[Folder, list[tuple[Folder, str]]]]:
    """The folder root/names[0]/.../names[-1], opened one name at a time without following
    a link, and the folders `make` created on the way (each as (parent, name)); every
    handle is closed after. FileNotFoundError for a missing folder when not `make`."""
    opened = [Folder.open(root)]
    made: list[tuple[Folder, str]] = []
    try:
        for name in names:
            if make and opened[-1].make(name):
                made.append((opened[-1], name))
            opened.append(opened[-1].child(name))
        yield opened[-1], made
    finally:
        for folder in reversed(opened):
            folder.close()


def remove_made(made: Sequence[tuple[Folder, str]]) -> None:
    """Undo the folders a failed write made: only those, innermost first, only while empty."""
    for parent, name in reversed(made):
        try:
            parent.remove(name)
        except OSError:
            return
