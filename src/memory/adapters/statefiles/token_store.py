"""JsonTokenStore: `<state_dir>/tokens.json`, owner-only (0600), rewritten whole under a lock.

Only salted digests are written; the secret itself exists once, in the output of
`ai-memory token create`. A running server rereads the file when it changes, so a
revocation takes effect on the next request.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from memory.adapters.statefiles.state_dir import ensure_state_dir
from memory.domain.errors import InvalidRequest
from memory.domain.tokens import ApiToken, TokenScope
from memory.ports.errors import StoreError
from memory.ports.token_store import TokenStore

_LOCK_TIMEOUT_S = 30.0
_FIELDS = ("name", "scope", "token_id", "salt", "digest", "created")


class JsonTokenStore(TokenStore):
    def __init__(self, state_dir: str | os.PathLike[str]):
        self.path = Path(state_dir) / "tokens.json"
        self._lock_path = Path(state_dir) / "locks" / "tokens.lock"
        self._guard = threading.Lock()
        self._seen: tuple[int, int, int] | None = None
        self._tokens: tuple[ApiToken, ...] = ()

    def add(self, token: ApiToken) -> None:
        with self._locked():
            tokens = self._read()
            if any(t.name == token.name for t in tokens):
                raise InvalidRequest(f"a token named {token.name!r} exists; revoke it first")
            self._write((*tokens, token))

    def find(self, token_id: str) -> ApiToken | None:
        return next((t for t in self._current() if t.token_id == token_id), None)

    def all(self) -> Sequence[ApiToken]:
        return self._current()

    def remove(self, name: str) -> bool:
        with self._locked():
            tokens = self._read()
            kept = tuple(t for t in tokens if t.name != name)
            if len(kept) == len(tokens):
                return False
            self._write(kept)
            return True

    def _current(self) -> tuple[ApiToken, ...]:
        """The tokens on disk now; parsed again only when the file changed."""
        try:
            st = self.path.stat()
        except FileNotFoundError:
            return ()
        except OSError as exc:
            raise StoreError(f"cannot read {self.path}: {exc}") from exc
        stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
        with self._guard:
            if stamp != self._seen:
                self._tokens, self._seen = self._read(), stamp
            return self._tokens

    def _read(self) -> tuple[ApiToken, ...]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            return tuple(_token(entry) for entry in data["tokens"])
        except FileNotFoundError:
            return ()
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise StoreError(f"{self.path} is unreadable ({exc}); fix or delete it and "
                             f"create the tokens again") from exc

    def _write(self, tokens: Sequence[ApiToken]) -> None:
        body = json.dumps({"version": 1, "tokens": [_record(t) for t in tokens]}, indent=1)
        temp = self.path.with_name(f".tokens.{os.getpid()}.tmp")
        try:
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(body)
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(temp, 0o600)  # a leftover temp file of that name may have wider bits
            os.replace(temp, self.path)
        except OSError as exc:
            raise StoreError(f"cannot write {self.path}: {exc}") from exc

    @contextmanager
    def _locked(self) -> Iterator[None]:
        ensure_state_dir(self.path.parent)
        try:
            self._lock_path.parent.mkdir(exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create {self._lock_path.parent}: {exc}") from exc
        lock = FileLock(str(self._lock_path), timeout=_LOCK_TIMEOUT_S)
        try:
            lock.acquire()
        except Timeout as exc:
            raise StoreError(f"{self._lock_path} stayed locked for {_LOCK_TIMEOUT_S:g}s") from exc
        try:
            yield
        finally:
            lock.release()


def _record(token: ApiToken) -> dict:
    return {"name": token.name, "scope": token.scope.value, "token_id": token.token_id,
            "salt": token.salt, "digest": token.digest, "created": token.created}


def _token(entry: dict) -> ApiToken:
    values = {key: str(entry[key]) for key in _FIELDS}
    return ApiToken(name=values["name"], scope=TokenScope.parse(values["scope"]),
                    token_id=values["token_id"], salt=values["salt"], digest=values["digest"],
                    created=values["created"])
