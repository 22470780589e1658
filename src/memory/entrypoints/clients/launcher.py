"""The command a client runs to start our server: one that outlives this process.

An installed environment (a venv, `pipx install`, `uv tool install`) keeps its `ai-memory`
script beside the interpreter for as long as it is installed. An environment uv made in its
cache (`uvx`, `uv tool run`, `uv run --with`) is deleted by `uv cache prune`; a client then
gets a `uvx --offline` command that rebuilds the same environment from uv's cache.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

DISTRIBUTION = "ai-memory-notes"
SCRIPT = "ai-memory"
_TORCH_BACKENDS = ("cpu", "cu", "rocm", "xpu")  # local version labels uv's --torch-backend takes


class LauncherNotFound(Exception):
    """Neither the installed script nor (for a uv cache environment) uvx could be found."""


@dataclass(frozen=True, kw_only=True)
class Interpreter:
    """The running Python: its environment, its executable and the environment variables."""

    prefix: Path
    executable: Path
    env: Mapping[str, str]
    windows: bool
    version: tuple[int, int]

    @classmethod
    def running(cls, env: Mapping[str, str], platform: str) -> Interpreter:
        return cls(prefix=Path(sys.prefix), executable=Path(sys.executable), env=env,
                   windows=platform == "win32", version=sys.version_info[:2])

    def in_uv_cache(self) -> bool:
        """uv made this environment below a folder tagged as a cache (CACHEDIR.TAG, which
        uv's cache root carries): uv may delete it at any time."""
        config = self.prefix / "pyvenv.cfg"
        try:
            made_by_uv = any(line.split("=")[0].strip() == "uv"
                             for line in config.read_text("utf-8").splitlines())
        except OSError:
            return False
        return made_by_uv and any((p / "CACHEDIR.TAG").is_file() for p in self.prefix.parents)


def as_command(command: str | Sequence[str]) -> tuple[str, ...]:
    """A command given as one executable path or as an executable and its leading arguments."""
    return (command,) if isinstance(command, str) else tuple(command)


def server_command(interpreter: Interpreter,
                   distributions: Iterable[metadata.Distribution] | None = None) -> tuple[str, ...]:
    """The executable (and leading arguments) that runs `ai-memory` from this installation."""
    if not interpreter.in_uv_cache():
        return (installed_script(interpreter),)
    found = list(metadata.distributions() if distributions is None else distributions)
    major, minor = interpreter.version
    return (*_uvx(interpreter), "--offline", "--python", f"{major}.{minor}",
            *_environment_options(found), SCRIPT)


def installed_script(interpreter: Interpreter) -> str:
    """Absolute path of the `ai-memory` script of this environment, else the one on PATH."""
    name = f"{SCRIPT}.exe" if interpreter.windows else SCRIPT
    beside = interpreter.executable.parent / name
    if beside.is_file():
        return str(beside.absolute())
    found = shutil.which(SCRIPT, path=interpreter.env.get("PATH"))
    if found:
        return str(Path(found).absolute())
    raise LauncherNotFound(
        f"cannot find the installed '{SCRIPT}' executable (not beside {interpreter.executable} "
        "nor on PATH); install the package first")


def _uvx(interpreter: Interpreter) -> tuple[str, ...]:
    """uvx beside the uv that made this environment (uv sets $UV), else uvx on PATH."""
    name = "uvx.exe" if interpreter.windows else "uvx"
    uv = interpreter.env.get("UV")
    if uv:
        beside = Path(uv).parent / name
        return (str(beside),) if beside.is_file() else (uv, "tool", "run")
    found = shutil.which("uvx", path=interpreter.env.get("PATH"))
    if found:
        return (str(Path(found).absolute()),)
    raise LauncherNotFound(
        f"this environment ({interpreter.prefix}) lives in uv's cache and will be deleted, but "
        "uvx is not on PATH to rebuild it; install for good with `uv tool install` instead")


def _environment_options(distributions: list[metadata.Distribution]) -> list[str]:
    """What uvx needs to rebuild this environment: our source, the packages installed from a
    URL (e.g. a CPU torch wheel) and the torch build the environment holds."""
    options: list[str] = []
    ours = None
    for dist in distributions:
        name = _canonical(dist.metadata["Name"])
        if name == DISTRIBUTION:
            ours = dist
        elif (requirement := _url_requirement(dist)) is not None:
            options += ["--with", requirement]
        elif name == "torch" and dist.version.partition("+")[2].startswith(_TORCH_BACKENDS):
            options += ["--torch-backend", dist.version.partition("+")[2]]
    if ours is None:
        raise LauncherNotFound(f"the '{DISTRIBUTION}' distribution is not installed here")
    source = _url_requirement(ours) or f"{DISTRIBUTION}=={ours.version}"
    return ["--from", source, *options]


def _url_requirement(dist: metadata.Distribution) -> str | None:
    """`name @ url` for a distribution installed from a URL or path (PEP 610), else None."""
    text = dist.read_text("direct_url.json")
    if not text:
        return None
    direct = json.loads(text)
    url = direct["url"]
    vcs = direct.get("vcs_info")
    if vcs:
        ref = vcs.get("commit_id") or vcs.get("requested_revision")
        url = f"{vcs['vcs']}+{url}" + (f"@{ref}" if ref else "")
    if direct.get("subdirectory"):
        url += f"#subdirectory={direct['subdirectory']}"
    return f"{_canonical(dist.metadata['Name'])} @ {url}"


def _canonical(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")
