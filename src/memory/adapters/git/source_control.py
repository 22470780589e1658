"""GitSourceControl: finds the git work tree of a folder and its `origin` remote URL.

`git config` answers first (it knows includes and `insteadOf` rewrites); where git is
missing, slow or refuses (a repository owned by someone else), the config file is read
directly. Nothing here prints: git's output is captured and its prompts are disabled.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from memory.ports.source_control import SourceControl, WorkTree

_SECTION = re.compile(r'^\s*\[\s*remote\s+"origin"\s*\]\s*$', re.IGNORECASE)
_ANY_SECTION = re.compile(r"^\s*\[")
_URL = re.compile(r"^\s*url\s*=\s*(?P<value>.*?)\s*$", re.IGNORECASE)


class GitSourceControl(SourceControl):
    def __init__(self, *, git: str = "git", timeout_s: float = 2.0):
        self._git = git
        self._timeout_s = timeout_s

    def work_tree(self, folder: str) -> WorkTree | None:
        top = _top(folder)
        if top is None:
            return None
        return WorkTree(path=str(top), origin_url=self._origin(top))

    def _origin(self, top: Path) -> str | None:
        try:
            done = subprocess.run(
                [self._git, "-C", str(top), "config", "--get", "remote.origin.url"],
                stdin=subprocess.DEVNULL, capture_output=True, text=True,
                timeout=self._timeout_s, check=False,
                env={**os.environ, "GIT_TERMINAL_PROMPT": "0"})
        except (OSError, subprocess.SubprocessError):
            return _origin_from_config(top)
        if done.returncode == 0:
            return done.stdout.strip() or None
        if done.returncode == 1:
            return None  # git's answer: the key is not set
        return _origin_from_config(top)


def _top(folder: str) -> Path | None:
    """The nearest folder at or above `folder` holding a `.git` entry."""
    try:
        start = Path(folder).expanduser().resolve()
    except (OSError, RuntimeError):
        return None
    if not start.is_dir():
        return None
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def _git_dir(top: Path) -> Path | None:
    """The repository folder: `.git` itself, or where a `.git` file (worktree) points."""
    entry = top / ".git"
    if entry.is_dir():
        return entry
    try:
        text = entry.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    first = text.strip().splitlines()[0] if text.strip() else ""
    if not first.startswith("gitdir:"):
        return None
    target = Path(first[len("gitdir:"):].strip())
    target = target if target.is_absolute() else top / target
    common = target / "commondir"  # a linked worktree keeps its config in the main repo
    try:
        if common.is_file():
            shared = Path(common.read_text(encoding="utf-8").strip())
            return shared if shared.is_absolute() else (target / shared).resolve()
    except OSError:
        pass
    return target


def _origin_from_config(top: Path) -> str | None:
    git_dir = _git_dir(top)
    if git_dir is None:
        return None
    try:
        lines = (git_dir / "config").read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    inside = False
    for line in lines:
        if _ANY_SECTION.match(line):
            inside = bool(_SECTION.match(line))
            continue
        match = _URL.match(line) if inside else None
        if match:
            return match.group("value").strip('"') or None
    return None
