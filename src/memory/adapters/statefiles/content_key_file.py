"""FileContentKeys: the content key in `<state_dir>/content.key`, owner-only (0600).

The key never leaves the machine's state folder: every hash a reader gets is keyed with it,
so nobody without this file can test a guess of a redacted value against a hash.
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

from memory.adapters.statefiles.state_dir import ensure_state_dir
from memory.domain.note_text import MIN_KEY_BYTES, ContentKey
from memory.ports.content_keys import ContentKeys
from memory.ports.errors import StoreError

KEY_FILE = "content.key"
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


class FileContentKeys(ContentKeys):
    def __init__(self, state_dir: str | os.PathLike[str]):
        self._state_dir = Path(state_dir)
        self.path = self._state_dir / KEY_FILE

    def key(self) -> ContentKey:
        try:
            return self._read()
        except FileNotFoundError:
            pass
        except OSError as e:
            raise StoreError(f"cannot read the content key {self.path}: {e.strerror or e}") \
                from e
        try:
            self._make()
            return self._read()
        except OSError as e:
            raise StoreError(f"cannot create the content key {self.path}: "
                             f"{e.strerror or e}") from e

    def _read(self) -> ContentKey:
        fd = os.open(self.path, os.O_RDONLY | NOFOLLOW)
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise StoreError(f"the content key {self.path} is not a regular file")
            if hasattr(os, "fchmod") and stat.S_IMODE(info.st_mode) & 0o077:
                try:
                    os.fchmod(handle.fileno(), 0o600)  # made readable by others: close it
                except OSError:
                    pass  # a read-only state folder, or another owner's: the key still reads
            text = handle.read(4 * MIN_KEY_BYTES + 1).decode("ascii", "replace").strip()
        try:
            return ContentKey(bytes.fromhex(text))
        except ValueError:
            raise StoreError(f"the content key {self.path} is damaged: remove it (every "
                             "note's content_hash then changes once)") from None

    def _make(self) -> None:
        """A new key under a temporary name, then linked into place: of two processes making
        one at once, the first link wins and both read that one."""
        ensure_state_dir(self._state_dir)
        temp = self._state_dir / f".{KEY_FILE}.{secrets.token_hex(6)}.tmp"
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW, 0o600)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(secrets.token_bytes(MIN_KEY_BYTES).hex().encode("ascii") + b"\n")
                handle.flush()
                os.fsync(handle.fileno())
            try:
                os.link(temp, self.path)
            except FileExistsError:
                pass
            except OSError:  # no hard links here (some network and FAT file systems)
                if not self.path.exists():
                    os.replace(temp, self.path)
        finally:
            try:
                os.unlink(temp)
            except FileNotFoundError:
                pass
