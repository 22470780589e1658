"""Where things live on one machine: home, platform and the environment variables we honour."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib.resources.abc import Traversable
from pathlib import Path

from memory.entrypoints.clients.launcher import Interpreter, as_command, server_command
from memory.entrypoints.clients.skill_copy import bundled_skill
from memory.entrypoints.settings import machine_environment

PLATFORMS = ("linux", "darwin", "win32")


_XDG_UNIXES = ("linux", "freebsd", "openbsd", "netbsd", "dragonfly", "sunos", "aix")


def normalize_platform(value: str) -> str:
    """Map a `sys.platform` value onto one of the three layouts we know (ValueError otherwise)."""
    if value in PLATFORMS:
        return value
    if value.startswith(("cygwin", "msys")):
        return "win32"
    if value.startswith(_XDG_UNIXES):
        return "linux"  # the BSDs and other Unixes follow the XDG layout
    raise ValueError(f"unsupported platform {value!r}; expected one of {', '.join(PLATFORMS)}")


@dataclass(frozen=True, kw_only=True)
class Host:
    """The user's home, the OS layout and the environment, so paths never read the real machine."""

    home: Path
    platform: str
    env: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "platform", normalize_platform(self.platform))

    def from_env(self, name: str) -> Path | None:
        value = (self.env.get(name) or "").strip()
        return Path(value) if value else None

    @property
    def xdg_config(self) -> Path:
        """`$XDG_CONFIG_HOME`, else `~/.config` (used by OpenCode on every OS)."""
        return self.from_env("XDG_CONFIG_HOME") or self.home / ".config"

    @property
    def app_data(self) -> Path:
        """The per-user application-settings folder of this OS layout."""
        if self.platform == "win32":
            return self.from_env("APPDATA") or self.home / "AppData" / "Roaming"
        if self.platform == "darwin":
            return self.home / "Library" / "Application Support"
        return self.xdg_config


@dataclass(frozen=True, kw_only=True)
class SetupPaths:
    """Defaults for `install_clients` read from the real environment."""

    home: Path
    platform: str
    env: Mapping[str, str]
    command: tuple[str, ...]  # the executable and leading arguments that run `ai-memory`
    skill: Traversable


def setup_paths(*, command: str | Sequence[str] | None = None) -> SetupPaths:
    """Home, platform, environment, server command and skill of the running machine."""
    platform = normalize_platform(sys.platform)
    env = machine_environment()
    launch = (as_command(command) if command
              else server_command(Interpreter.running(env, platform)))
    return SetupPaths(home=Path.home(), platform=platform, env=env, command=launch,
                      skill=bundled_skill())
