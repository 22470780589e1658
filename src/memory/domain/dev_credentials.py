"""Development-only credentials: a well-known password in a URL to this machine's database.

`postgres://app:app@localhost:5432/app` is still hidden like any secret; what changes is the
noise: it is said once when the note is indexed, and a note can silence it (docs/notes.md).
"""

from __future__ import annotations

import ipaddress
import re

# The passwords no one guards: the stock ones of database images, tutorials and templates.
# The user name repeated (`app:app`) counts too.
DEV_PASSWORDS = frozenset({"password", "postgres", "secret", "dev", "test", "example",
                           "changeme"})
# Names that never leave this machine or a test network (RFC 6761, mDNS).
LOCAL_SUFFIXES = (".localhost", ".local", ".test")
ALLOW = "allow-dev-credentials"  # the front matter value `secrets: allow-dev-credentials`
HOST = re.compile(r"\[[^\]\s]*\]|[^:/?#\s@\[\]]*")
URL_KIND = "url-password"


def is_dev_credential(line: str, start: int, end: int, kind: str) -> bool:
    """Whether the secret at columns [start, end) of `line` is a development credential: the
    password of a URL (`scheme://user:password@host`) whose host is local (localhost,
    127.0.0.0/8, ::1, a `.localhost`, `.local` or `.test` name) and whose password is the
    user name or one of DEV_PASSWORDS. Anything else, or a URL it cannot read, is not."""
    if kind != URL_KIND or line[end:end + 1] != "@" or line[start - 1:start] != ":":
        return False
    scheme_end = line.rfind("://", 0, start)
    if scheme_end == -1:
        return False
    user, password = line[scheme_end + 3:start - 1], line[start:end]
    host = HOST.match(line, end + 1)
    return (is_local_host(host.group() if host else "")
            and (password.lower() in DEV_PASSWORDS or password.lower() == user.lower()))


def is_local_host(host: str) -> bool:
    name = host.strip("[]").lower().rstrip(".")
    if name == "localhost" or name.endswith(LOCAL_SUFFIXES):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def allows_dev_credentials(value: object) -> bool:
    """Whether a note's `secrets` front matter (one value or a list) silences the notice."""
    items = value if isinstance(value, list) else [value]
    return any(isinstance(item, str) and item.strip().lower() == ALLOW for item in items)
