"""The state directory: created on first use, owner-only (0700), and kept out of git by its own
.gitignore.

Other accounts must not read the index, the logs or the credentials in it, nor plant files
there. A 0700 folder is enough for that: no path below it can be opened by another account,
whatever the modes of the files in it (the CLI's umask of 077 makes those owner-only too). A
state folder left open by an older version is closed again; its contents are not walked, as a
folder named with --state-dir may hold much more than our files.
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

from memory.ports.errors import StoreError

log = logging.getLogger(__name__)
OPEN_BITS = 0o077  # group and other
MARKER = "*\n"  # the .gitignore this module writes: the folder is a state folder


def ensure_state_dir(state_dir: str | os.PathLike[str]) -> Path:
    """Create the state directory if needed (0700), close it if others may enter it; write
    a `*` .gitignore there if it has none."""
    path = Path(state_dir)
    try:
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
        _close(path)
        try:
            # "x" so that two processes racing here never truncate each other's file.
            with open(path / ".gitignore", "x", encoding="utf-8") as handle:
                handle.write(MARKER)
        except FileExistsError:
            pass
    except OSError as exc:
        raise StoreError(f"cannot create state directory {path}: {exc}") from exc
    return path


def _close(path: Path) -> None:
    """Take group and other bits off a state folder that has them (with a warning); only
    warn for a folder that is not plainly one (a shared, sticky folder such as /tmp)."""
    st = path.stat()
    mode = stat.S_IMODE(st.st_mode)
    if os.name == "nt":
        return
    if st.st_uid != os.geteuid() and os.geteuid() != 0:
        log.warning("the state folder %s belongs to another account (uid %d), which can change "
                    "what it holds: pass --state-dir for a folder of your own", path, st.st_uid)
    if not mode & OPEN_BITS:
        return
    if mode & stat.S_ISVTX or not _is_state_folder(path):
        log.warning("the state folder %s is open to other accounts (mode %o): they can read "
                    "the index and logs in it; make it 0700 or pass --state-dir", path, mode)
        return
    try:
        os.chmod(path, mode & ~OPEN_BITS)
    except OSError as exc:  # a read-only mount, another account's folder: say so, go on
        log.warning("the state folder %s is open to other accounts (mode %o) and could not "
                    "be closed: %s", path, mode, exc)
        return
    log.warning("the state folder %s was open to other accounts (mode %o): made it 0700",
                path, mode)


def _is_state_folder(path: Path) -> bool:
    try:
        return (path / ".gitignore").read_text(encoding="utf-8") == MARKER
    except (OSError, UnicodeDecodeError):
        return False
