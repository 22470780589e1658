"""The owner's local credential: a random secret in `<state_dir>/local-token` (0600, in the
0700 state folder) that a loopback server requires and `connect` sends, and the challenge a
client puts to a server, on the connection it will use, before sending it anything.

Standard library only: the stdio bridge imports this.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import secrets
import stat
import sys
from pathlib import Path

from memory.domain.errors import Unavailable
from memory.domain.tokens import ProofRole, owner_proof, same_secret
from memory.entrypoints.http.config import STATUS_PATH

FILE_NAME = "local-token"
# `<nonce> <client proof>`: the client shows it holds the secret, the server answers its own.
CHALLENGE_HEADER = "ai-memory-challenge"
_NONCE = re.compile(r"^[0-9a-f]{32,128}$")
_SECRET = re.compile(r"^[A-Za-z0-9_-]{43,128}$")  # secrets.token_urlsafe(32) and longer
_MAX_ANSWER = 4096


def credential_path(state_dir: Path) -> Path:
    return state_dir / FILE_NAME


def read_secret(state_dir: Path) -> str | None:
    """The secret, if the file is there, this account's, and readable by no one else."""
    path = credential_path(state_dir)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        if not _owner_only(os.fstat(handle.fileno())):
            return None  # as good as known to others: the server makes a new one
        text = handle.read(256).decode("ascii", "replace").strip()
    return text if _SECRET.match(text) else None


def load_or_create(state_dir: Path) -> str:
    """The secret of this state folder, made now (owner-only) if there is none, or if the one
    there could have been read by another account."""
    found = read_secret(state_dir)
    if found is not None:
        return found
    path = credential_path(state_dir)
    if path.exists() or path.is_symlink():
        print(f"warning: {path} was not owner-only (or not this account's): replacing it",
              file=sys.stderr)
        path.unlink()
    temp = path.with_name(f".{FILE_NAME}.{os.getpid()}.tmp")
    temp.unlink(missing_ok=True)
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as handle:
        handle.write(secrets.token_urlsafe(32) + "\n")
    try:
        os.link(temp, path)  # fails on an existing name: two servers starting at once agree
    except FileExistsError:
        pass
    finally:
        temp.unlink(missing_ok=True)
    found = read_secret(state_dir)
    if found is None:
        raise Unavailable(f"cannot make the local credential {path}")
    return found


def answer_challenge(secret: str, header: str | None, port: int) -> str | None:
    """The server's proof for a challenge whose client proof is right, else None."""
    nonce, _, proof = (header or "").strip().partition(" ")
    if not _NONCE.match(nonce):
        return None
    if not same_secret(owner_proof(secret, ProofRole.CLIENT, port, nonce), proof.strip()):
        return None
    return owner_proof(secret, ProofRole.SERVER, port, nonce)


def server_holds(conn: http.client.HTTPConnection, secret: str) -> bool:
    """Put the challenge to the server at the other end of `conn`; True when it proves it
    holds `secret`. The connection stays open, so what follows on it goes to that server."""
    nonce = secrets.token_hex(16)
    challenge = f"{nonce} {owner_proof(secret, ProofRole.CLIENT, conn.port, nonce)}"
    try:
        conn.request("GET", STATUS_PATH, headers={CHALLENGE_HEADER: challenge})
        response = conn.getresponse()
        body = response.read(_MAX_ANSWER + 1)
    except (OSError, http.client.HTTPException):
        return False
    if response.status != 200 or len(body) > _MAX_ANSWER or response.will_close:
        return False
    try:
        proof = json.loads(body).get("proof")
    except (ValueError, AttributeError):
        return False
    expected = owner_proof(secret, ProofRole.SERVER, conn.port, nonce)
    return isinstance(proof, str) and same_secret(expected, proof)


def require_server_holds(conn: http.client.HTTPConnection, secret: str) -> None:
    if not server_holds(conn, secret):
        raise Unavailable(f"what answers on port {conn.port} is not the owner's ai-memory "
                          "server (it cannot prove it holds this account's local credential); "
                          "nothing was sent to it")


def _owner_only(st: os.stat_result) -> bool:
    if sys.platform == "win32":
        return True  # no POSIX bits there; the folder's ACL is the user's profile's
    return (stat.S_ISREG(st.st_mode) and st.st_uid == os.geteuid()
            and not st.st_mode & 0o077)
