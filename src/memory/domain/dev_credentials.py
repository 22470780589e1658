"""Development-only credentials: a well-known password in a URL to this machine's database.

`postgres://app:app@localhost:5432/app` is still hidden like any secret; what changes is the
noise: it is said once when the note is indexed, and a note can silence it (docs/notes.md).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence

# The passwords no one guards: the stock ones of database images, tutorials and templates.
# The user name repeated (`app:app`) counts too.
DEV_PASSWORDS = frozenset({"password", "postgres", "secret", "dev", "test", "example",
                           "changeme"})
# Names that never leave this machine or a test network (RFC 6761, mDNS).
LOCAL_SUFFIXES = (".localhost", ".local", ".test")
ALLOW = "allow-dev-credentials"  # the front matter value `secrets: allow-dev-credentials`
HOST = re.compile(r"\[[^\]\s]*\]|[^:/?#\s@\[\]]*")
URL_KIND = "url-password"
# A keyword DSN (libpq `host=localhost user=app password=app`, ADO `Server=localhost;User
# Id=app;Password=app`): its password is judged by the host and user on the same line.
DSN_KINDS = frozenset({"password-assignment", "connection-string-password"})
DSN_VALUE = r"\s*=\s*['\"]?(?P<value>[^\s;'\",]+)"
DSN_HOST = re.compile(r"(?i)(?<![\w.\-])(?:host|hostname|server|data source)" + DSN_VALUE)
DSN_USER = re.compile(r"(?i)(?<![\w.\-])(?:user|username|user id|uid)" + DSN_VALUE)


def dev_credentials(line: str, spans: Sequence[tuple[int, int, str]]) -> list[bool]:
    """For each secret at columns [start, end) of `line`, of its kind, whether it is a
    development credential: the password of a URL (`scheme://user:password@host`) or of a
    keyword DSN (`host=... user=... password=...` on one line) whose host is local
    (localhost, 127.0.0.0/8, ::1, a `.localhost`, `.local` or `.test` name) and whose
    password is the user name or one of DEV_PASSWORDS. Anything else, or a line it cannot
    read so, is not. The line's hosts and users are read once, however many spans it holds:
    a pasted line of labels stays linear."""
    dsn: tuple[list[str], set[str]] | None = None
    out = []
    for start, end, kind in spans:
        if kind in DSN_KINDS:
            dsn = dsn or _dsn_parts(line)
            out.append(_dsn_dev_credential(*dsn, line[start:end].strip("{}'\" \t")))
        else:
            out.append(kind == URL_KIND and _url_dev_credential(line, start, end))
    return out


def _url_dev_credential(line: str, start: int, end: int) -> bool:
    if line[end:end + 1] != "@" or line[start - 1:start] != ":":
        return False
    scheme_end = line.rfind("://", max(0, start - 512), start)
    if scheme_end == -1:
        return False
    user, password = line[scheme_end + 3:start - 1], line[start:end]
    host = HOST.match(line, end + 1, end + 1 + 256)
    return (is_local_host(host.group() if host else "")
            and (password.lower() in DEV_PASSWORDS or password.lower() == user.lower()))


def _dsn_parts(line: str) -> tuple[list[str], set[str]]:
    """The hosts and the user names (lower-cased) a line names as DSN keywords."""
    if "=" not in line:
        return [], set()
    return ([found["value"] for found in DSN_HOST.finditer(line)],
            {found["value"].lower() for found in DSN_USER.finditer(line)})


def _dsn_dev_credential(hosts: list[str], users: set[str], password: str) -> bool:
    """Every host the line names is local, and the password is a well-known one or a user's
    name given on the line."""
    return (bool(hosts) and all(map(is_local_host, hosts))
            and (password.lower() in DEV_PASSWORDS or password.lower() in users))


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
