"""Where things live on one machine: home, platform and the environment variables we honour."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

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
    command: str
    skill_dir: Path


def installed_command(platform: str | None = None) -> str:
    """Absolute path of the `ai-memory` executable of this installation.

    The script beside the running interpreter wins (it belongs to the same virtual
    environment as this code); otherwise the first one on PATH.
    """
    platform = normalize_platform(platform or sys.platform)
    name = "ai-memory.exe" if platform == "win32" else "ai-memory"
    beside = Path(sys.executable).parent / name
    if beside.is_file():
        return str(beside.absolute())
    found = shutil.which("ai-memory")
    if found:
        return str(Path(found).absolute())
    raise FileNotFoundError(
        "cannot find the installed 'ai-memory' executable (not beside "
        f"{sys.executable} nor on PATH); install the package or pass the command explicitly")


def bundled_skill_dir() -> Path:
    """The canonical skill folder shipped with this checkout or installation."""
    candidates = (
        Path(__file__).resolve().parents[4] / "skills" / "ai-memory",  # source checkout
        Path(sys.prefix) / "share" / "ai-memory" / "skills" / "ai-memory",  # data files
    )
    for candidate in candidates:
        if (candidate / "SKILL.md").is_file():
            return candidate
    return candidates[0]


def setup_paths(*, command: str | None = None) -> SetupPaths:
    """Home, platform, environment, executable and skill folder of the running machine."""
    platform = normalize_platform(sys.platform)
    return SetupPaths(home=Path.home(), platform=platform, env=dict(os.environ),
                      command=command or installed_command(platform),
                      skill_dir=bundled_skill_dir())
