"""What a client needs from us: where its config lives, the entry we merge, where skills go."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from memory.domain.tokens import PREFIX as TOKEN_PREFIX
from memory.entrypoints.clients.host import Host
from memory.entrypoints.http.config import is_loopback, require_tls

SERVER_NAME = "ai-memory"
_SUFFIX = re.compile(r"[a-z0-9][a-z0-9_-]{0,39}")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def entry_name(name: str | None) -> str:
    """Our key in a client's server table: `ai-memory`, or `ai-memory-<name>` so that several
    memory roots can be registered side by side (ValueError for a name clients may mangle)."""
    if name is None:
        return SERVER_NAME
    if not _SUFFIX.fullmatch(name):
        raise ValueError(f"invalid --name {name!r}: use 1-40 lowercase letters, digits, '-' or "
                         "'_', starting with a letter or digit")
    return f"{SERVER_NAME}-{name}"


def is_our_entry(key: str) -> bool:
    return key == SERVER_NAME or key.startswith(f"{SERVER_NAME}-")


def agents_skill_path(host: Host) -> Path:
    """`~/.agents/skills/`: the user skills folder Codex, Copilot, OpenCode and VS Code share."""
    return host.home / ".agents" / "skills" / SERVER_NAME


@dataclass(frozen=True, kw_only=True)
class ServerLaunch:
    """How a client starts our stdio server: an absolute command and its arguments."""

    command: str
    args: tuple[str, ...]

    @classmethod
    def of(cls, command: Sequence[str], *args: str) -> ServerLaunch:
        """`command` is the executable and any leading arguments (a `uvx ...` launch has some)."""
        executable, *leading = command
        return cls(command=executable, args=(*leading, *args))

    @classmethod
    def serve(cls, command: Sequence[str], memory_root: Path,
              read_only: bool = False) -> ServerLaunch:
        """A server of the client's own: its own model, index and watcher; `read_only`
        leaves out the write tools."""
        return cls.of(command, "serve", "--root", str(memory_root),
                      *(("--read-only",) if read_only else ()))

    @classmethod
    def connect(cls, command: Sequence[str], memory_root: Path) -> ServerLaunch:
        """The stdio bridge to the root's one daemon, which every client shares."""
        return cls.of(command, "connect", "--root", str(memory_root))

    @classmethod
    def bridge(cls, command: Sequence[str], remote: RemoteServer) -> ServerLaunch:
        """The stdio bridge to a server someone else runs, for a client that speaks only stdio."""
        token = ("--token-env", remote.token_env) if remote.token_env else ()
        return cls.of(command, "connect", "--url", remote.url, *token)


@dataclass(frozen=True, kw_only=True)
class RemoteServer:
    """A server reached at `url` (a team server); its bearer token is in `$token_env`.

    Only the variable's name is ever written to a client's config; each client reads the
    value from its own environment when it connects.
    """

    url: str
    token_env: str | None = None

    @classmethod
    def parse(cls, url: str, token_env: str | None = None) -> RemoteServer:
        """Check both up front (ValueError saying what to pass instead)."""
        parts = urlsplit(url.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"--url: expected an http:// or https:// URL with a host, e.g. "
                             f"https://memory.example.com/mcp (got scheme {parts.scheme!r})")
        if parts.username or parts.password or parts.query or parts.fragment:
            raise ValueError(f"--url {parts.scheme}://{parts.hostname}...: credentials, query "
                             "strings and fragments would be written into every client's config "
                             "file; give the bare URL and pass the token with --token-env VAR")
        require_tls(url, "--url", "the bearer token and every note read or written")
        if token_env is not None and token_env.startswith(TOKEN_PREFIX):
            raise ValueError("--token-env takes the name of the variable that holds the token, "
                             f"not the token itself: export AI_MEMORY_TOKEN={TOKEN_PREFIX}... and "
                             "pass --token-env AI_MEMORY_TOKEN")
        if token_env is not None and not _ENV_NAME.fullmatch(token_env):
            raise ValueError("--token-env takes the name of an environment variable (letters, "
                             "digits and '_', not starting with a digit), not its value")
        return cls(url=url.strip(), token_env=token_env)

    def header_fields(self, reference: str) -> dict[str, Any]:
        """`{"headers": {"Authorization": "Bearer <reference>"}}`, VAR in `reference` (the
        client's own interpolation syntax, e.g. `${VAR}`) being the variable's name; {}
        without a token."""
        if self.token_env is None:
            return {}
        bearer = "Bearer " + reference.replace("VAR", self.token_env)
        return {"headers": {"Authorization": bearer}}

    @property
    def on_this_machine(self) -> bool:
        return is_loopback(urlsplit(self.url).hostname or "")


@dataclass(frozen=True, kw_only=True)
class Registration:
    """What every entry points at: a stdio launch, and for the clients that speak HTTP, a
    URL in its place when there is one."""

    launch: ServerLaunch
    remote: RemoteServer | None = None


@dataclass(frozen=True, kw_only=True)
class ServerEntry:
    """Our entry in one config file: `container.name = fields`.

    Fields named in `keep_existing` are only defaults: a value the user already set there
    (extra environment variables, a narrowed tool list) is kept on every later run.
    """

    container: str
    fields: Mapping[str, Any]
    keep_existing: frozenset[str] = frozenset()
    # keys of the other transport (or an auth field we no longer write): the client would
    # reject or misread them beside ours, e.g. Codex refuses `url` next to `command`
    drop: frozenset[str] = frozenset()
    name: str = SERVER_NAME

    @classmethod
    def for_url(cls, container: str, fields: Mapping[str, Any], *, stdio_keys: frozenset[str],
                auth_keys: frozenset[str] = frozenset({"headers"}),
                keep_existing: frozenset[str] = frozenset()) -> ServerEntry:
        """An entry reaching a URL: the stdio form's keys go, and so do the auth keys we no
        longer write (a token registered before, none now)."""
        return cls(container=container, fields=fields, keep_existing=keep_existing,
                   drop=stdio_keys | (auth_keys - fields.keys()))

    def merged(self, current: Any) -> dict[str, Any]:
        """The entry we want, given what the file holds now (None or a non-table: replace)."""
        if not isinstance(current, Mapping):
            return dict(self.fields)
        out = {key: value for key, value in current.items() if key not in self.drop}
        for key, value in self.fields.items():
            if key in self.keep_existing and key in out:
                continue
            out[key] = value
        return out

    def as_document(self) -> dict[str, Any]:
        """The whole content of a config file that holds only our entry."""
        return {self.container: {self.name: dict(self.fields)}}


@dataclass(frozen=True, kw_only=True)
class ClientTarget:
    """One MCP client: its config file, the entry format and the skill folder it reads."""

    name: str
    title: str
    config_format: Literal["toml", "json"]
    config_path: Callable[[Host], Path]
    marker: Callable[[Host], Path]  # exists when the client seems installed
    entry: Callable[[ServerLaunch], ServerEntry]
    # the client's own URL entry; None: it speaks only stdio and gets the bridge instead
    remote_entry: Callable[[RemoteServer], ServerEntry] | None = None
    skill_path: Callable[[Host], Path] | None = None
    # where earlier versions of ai-memory put this client's copy of the skill
    legacy_skill_paths: Callable[[Host], tuple[Path, ...]] = lambda host: ()
    check: str = ""  # how a person confirms the server is connected

    def is_present(self, host: Host) -> bool:
        return self.marker(host).exists()

    def entry_for(self, registration: Registration) -> ServerEntry:
        if registration.remote is not None and self.remote_entry is not None:
            return self.remote_entry(registration.remote)
        return self.entry(registration.launch)
