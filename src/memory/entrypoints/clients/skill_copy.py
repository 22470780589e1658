"""Keep a client's copy of the ai-memory skill identical to the one we ship, or remove it."""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from memory.entrypoints.clients.config_files import Change, FileDiff, write_atomic

_SKIPPED_NAMES = {"__pycache__", ".DS_Store"}
_OUR_NAME = re.compile(r"^name:[ \t]*[\"']?ai-memory[\"']?[ \t]*$", re.MULTILINE)


@dataclass(frozen=True, kw_only=True)
class SkillChange:
    action: Change
    message: str
    files: tuple[FileDiff, ...] = ()  # one per file of the skill, in a change

    @property
    def diff(self) -> str:
        return "".join(f.diff for f in self.files)


def bundled_skill() -> Traversable:
    """The skill shipped inside the `memory` package (package data, found the same way in a
    source checkout, a wheel install and an editable install)."""
    return resources.files("memory").joinpath("skills", "ai-memory")


def _files(root: Traversable, prefix: str = "") -> dict[str, bytes]:
    """Every file under `root` by forward-slash relative path (hidden files excluded)."""
    out: dict[str, bytes] = {}
    for entry in sorted(root.iterdir(), key=lambda item: item.name):
        if entry.name in _SKIPPED_NAMES or entry.name.startswith("."):
            continue
        if entry.is_dir():
            out.update(_files(entry, f"{prefix}{entry.name}/"))
        elif entry.is_file():
            out[prefix + entry.name] = entry.read_bytes()
    return out


def _diff(target: Path, old: dict[str, bytes], new: dict[str, bytes]) -> tuple[FileDiff, ...]:
    def text(data: bytes | None) -> str | None:
        return None if data is None else data.decode("utf-8", "replace")
    return tuple(FileDiff.between(target / name, text(old.get(name)), text(new.get(name)))
                 for name in sorted(set(old) | set(new)))


def install_skill(source: Traversable, target: Path, *, dry_run: bool) -> SkillChange:
    if not source.joinpath("SKILL.md").is_file():
        raise FileNotFoundError(f"skill source {source} has no SKILL.md")
    wanted = _files(source)
    origin = source.resolve() if isinstance(source, Path) else None
    if target.is_symlink() or (target.exists() and target.resolve() == origin):
        same = target.resolve() == origin
        return SkillChange(action=Change.UNCHANGED if same else Change.SKIPPED,
                           message="skill folder is a link to the canonical skill" if same
                           else f"{target} is a link to another folder; left alone")
    present = _files(target) if target.is_dir() else {}
    if present == wanted:
        return SkillChange(action=Change.UNCHANGED, message="skill already up to date")
    action = Change.UPDATED if target.exists() else Change.CREATED
    files = _diff(target, present, wanted)
    if dry_run:
        return SkillChange(action=action, message="dry run: skill not copied", files=files)
    for name, data in wanted.items():
        if present.get(name) != data:
            write_atomic(target / name, data)
    for name in set(present) - set(wanted):
        (target / name).unlink()
    return SkillChange(action=action, message=f"skill copied to {target}", files=files)


def remove_skill(target: Path, *, dry_run: bool) -> SkillChange:
    if target.is_symlink():
        if not dry_run:
            target.unlink()
        return SkillChange(action=Change.REMOVED, message=f"removed the link {target}")
    if not target.exists():
        return SkillChange(action=Change.UNCHANGED, message="no skill copy to remove")
    skill = target / "SKILL.md"
    if not skill.is_file() or not _OUR_NAME.search(skill.read_text("utf-8", "replace")):
        return SkillChange(action=Change.SKIPPED,
                           message=f"{target} does not look like our skill; left alone")
    files = _diff(target, _files(target), {})
    if dry_run:
        return SkillChange(action=Change.REMOVED, message="dry run: skill not removed", files=files)
    shutil.rmtree(target)
    return SkillChange(action=Change.REMOVED, message=f"removed {target}", files=files)
