"""The state directory: created on first use, owner-only (0700), and kept out of git by its own
.gitignore.

Other accounts must not read the index, the logs or the credentials in it, nor plant files
there. A 0700 folder is enough for that (no path below it can be opened by another account);
the CLI's umask of 077 makes what is created inside owner-only too. A folder left open by an
older version, or made by hand, is tightened, with its contents, once.
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

from memory.ports.errors import StoreError

log = logging.getLogger(__name__)
OPEN_BITS = 0o077  # group and other


def ensure_state_dir(state_dir: str | os.PathLike[str]) -> Path:
    """Create the state directory if needed (0700), tighten it if others may enter it; write
    a `*` .gitignore there if it has none."""
    path = Path(state_dir)
    try:
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
        _tighten(path)
        try:
            # "x" so that two processes racing here never truncate each other's file.
            with open(path / ".gitignore", "x", encoding="utf-8") as handle:
                handle.write("*\n")
        except FileExistsError:
            pass
    except OSError as exc:
        raise StoreError(f"cannot create state directory {path}: {exc}") from exc
    return path


def _tighten(path: Path) -> None:
    """Remove group and other bits from the folder and everything in it, if the folder has any."""
    st = path.stat()
    mode = stat.S_IMODE(st.st_mode)
    if os.name == "nt":
        return
    if st.st_uid != os.geteuid() and os.geteuid() != 0:
        log.warning("the state folder %s belongs to another account (uid %d), which can change "
                    "what it holds: pass --state-dir for a folder of your own", path, st.st_uid)
    if not mode & OPEN_BITS:
        return
    try:
        for folder, dirs, files in os.walk(path):
            for name in (*dirs, *files):
                _owner_only(Path(folder) / name)
        os.chmod(path, mode & ~OPEN_BITS)
    except OSError as exc:  # a read-only mount, another account's folder: say so, go on
        log.warning("the state folder %s is open to other accounts (mode %o) and could not "
                    "be made owner-only: %s", path, mode, exc)
        return
    log.warning("the state folder %s was open to other accounts (mode %o): made it and its "
                "contents owner-only", path, mode)


def _owner_only(path: Path) -> None:
    st = path.lstat()
    if not stat.S_ISLNK(st.st_mode) and st.st_mode & OPEN_BITS:
        os.chmod(path, stat.S_IMODE(st.st_mode) & ~OPEN_BITS)
