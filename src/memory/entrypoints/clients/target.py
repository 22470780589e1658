"""What a client needs from us: where its config lives, the entry we merge, where skills go."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from memory.entrypoints.clients.host import Host

SERVER_NAME = "ai-memory"
_SUFFIX = re.compile(r"[a-z0-9][a-z0-9_-]{0,39}")


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
    """How every client starts our stdio server: an absolute command and its arguments."""

    command: str
    args: tuple[str, ...]

    @classmethod
    def serve(cls, command: Sequence[str], memory_root: Path) -> ServerLaunch:
        """`command` is the executable and any leading arguments (a `uvx ...` launch has some)."""
        executable, *leading = command
        return cls(command=executable, args=(*leading, "serve", "--root", str(memory_root)))


@dataclass(frozen=True, kw_only=True)
class ServerEntry:
    """Our entry in one config file: `container.name = fields`.

    Fields named in `keep_existing` are only defaults: a value the user already set there
    (extra environment variables, a narrowed tool list) is kept on every later run.
    """

    container: str
    fields: Mapping[str, Any]
    keep_existing: frozenset[str] = frozenset()
    name: str = SERVER_NAME

    def merged(self, current: Any) -> dict[str, Any]:
        """The entry we want, given what the file holds now (None or a non-table: replace)."""
        if not isinstance(current, Mapping):
            return dict(self.fields)
        out = dict(current)
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
    skill_path: Callable[[Host], Path] | None = None
    # where earlier versions of ai-memory put this client's copy of the skill
    legacy_skill_paths: Callable[[Host], tuple[Path, ...]] = lambda host: ()
    check: str = ""  # how a person confirms the server is connected

    def is_present(self, host: Host) -> bool:
        return self.marker(host).exists()
