"""File-system steps of an atomic note write: a synced temporary file, then one rename.

A temporary file is hidden (a leading dot) so the scanner and the watcher never see it.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
import time
from collections.abc import Callable
from pathlib import Path

WINDOWS = os.name == "nt"
# Antivirus and search indexers hold files open for a moment on Windows; a rename then fails.
RENAME_TRIES, RENAME_PAUSE_S = 20, 0.05
NO_HARD_LINKS = {errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK,
                 errno.ENOSYS}


def _retrying(step: Callable[[], None]) -> None:
    for attempt in range(RENAME_TRIES):
        try:
            return step()
        except PermissionError:
            if not WINDOWS or attempt == RENAME_TRIES - 1:
                raise
            time.sleep(RENAME_PAUSE_S)


def write_temp(beside: Path, data: bytes, *, mode_of: Path | None = None) -> Path:
    """A hidden file next to `beside` holding data, flushed to disk; the caller renames it."""
    temp = beside.with_name(f".{beside.name}.{secrets.token_hex(6)}.tmp")
    with open(temp, "xb") as handle:
        try:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        except BaseException:
            handle.close()
            discard(temp)
            raise
    if mode_of is not None:
        try:
            os.chmod(temp, stat.S_IMODE(os.stat(mode_of).st_mode))  # keep the note's mode
        except OSError:
            pass
    return temp


def discard(path: Path) -> None:
    """Remove a temporary file this module made, if it is still there."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def replace_file(temp: Path, target: Path) -> None:
    _retrying(lambda: os.replace(temp, target))


def rename_no_replace(source: Path, target: Path) -> None:
    """Give source the name target; FileExistsError, changing nothing, if target exists.

    A hard link fails atomically on an existing name; Windows' rename already refuses one.
    Where hard links are not supported, the check and the rename are only as atomic as the
    write lock makes them.
    """
    if WINDOWS:
        return _retrying(lambda: os.rename(source, target))
    try:
        os.link(source, target)
    except FileExistsError:
        raise
    except OSError as e:
        if e.errno not in NO_HARD_LINKS:
            raise
        if os.path.lexists(target):
            raise FileExistsError(errno.EEXIST, "file exists", str(target)) from None
        os.rename(source, target)
        return
    os.unlink(source)


def sync_folder(folder: Path) -> None:
    """Make a rename in folder durable; Windows has no directory handles to sync."""
    if WINDOWS:
        return
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems cannot sync a directory; the rename itself happened
    finally:
        os.close(fd)


def make_folders(root: Path, folder: Path) -> list[Path]:
    """Create the missing folders from root down to folder; the ones made, outermost first."""
    made: list[Path] = []
    current = root
    for part in folder.relative_to(root).parts:
        current = current / part
        try:
            os.mkdir(current)
        except FileExistsError:
            continue
        except OSError:
            remove_folders(made)
            raise
        made.append(current)
    return made


def remove_folders(made: list[Path]) -> None:
    """Undo make_folders after a failed write: only folders it made, only while empty."""
    for folder in reversed(made):
        try:
            os.rmdir(folder)
        except OSError:
            return
