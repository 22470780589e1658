"""What a client needs from us: where its config lives, the entry we merge, where skills go."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from memory.entrypoints.clients.host import Host

SERVER_NAME = "ai-memory"


@dataclass(frozen=True, kw_only=True)
class ServerLaunch:
    """How every client starts our stdio server: an absolute command and its arguments."""

    command: str
    args: tuple[str, ...]

    @classmethod
    def serve(cls, command: str, memory_root: Path) -> ServerLaunch:
        return cls(command=command, args=("serve", "--root", str(memory_root)))


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
    check: str = ""  # how a person confirms the server is connected

    def is_present(self, host: Host) -> bool:
        return self.marker(host).exists()
