"""Register (or unregister) the ai-memory MCP server with each client: one result per file."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from memory.entrypoints.clients import (
    claude_code, claude_desktop, codex, copilot, opencode, vscode,
)
from memory.entrypoints.clients.config_files import (
    BACKUP_INFIX, backup, read_text, unified_diff, write_atomic,
)
from memory.entrypoints.clients.errors import ConfigSyntaxError, UneditableConfig
from memory.entrypoints.clients.host import Host
from memory.entrypoints.clients.json_config import JsonConfigEditor
from memory.entrypoints.clients.skill_copy import install_skill, remove_skill
from memory.entrypoints.clients.target import ClientTarget, ServerLaunch
from memory.entrypoints.clients.toml_config import TomlConfigEditor

Action = Literal["created", "updated", "unchanged", "removed", "skipped", "error"]

TARGETS: dict[str, ClientTarget] = {
    target.name: target
    for target in (codex.TARGET, claude_code.TARGET, claude_desktop.TARGET, copilot.TARGET,
                   opencode.TARGET, vscode.TARGET)
}
CLIENT_NAMES: tuple[str, ...] = tuple(TARGETS)

_EDITORS = {"toml": TomlConfigEditor(), "json": JsonConfigEditor()}


@dataclass(frozen=True, kw_only=True)
class ClientResult:
    """What happened (or, in a dry run, would happen) to one file or skill folder of a client."""

    client: str
    path: Path
    action: Action
    message: str = ""
    diff: str = ""


def select_targets(clients: Sequence[str] | None) -> list[ClientTarget]:
    """The named clients in our canonical order; an unknown name is a ValueError."""
    if clients is None:
        return list(TARGETS.values())
    unknown = [name for name in clients if name not in TARGETS]
    if unknown:
        raise ValueError(f"unknown client(s) {', '.join(map(repr, unknown))}; "
                         f"valid clients: {', '.join(CLIENT_NAMES)}")
    return [target for name, target in TARGETS.items() if name in clients]


def install_clients(*, home: Path, platform: str, env: Mapping[str, str], command: str,
                    memory_root: Path, skill_dir: Path, clients: Sequence[str] | None = None,
                    dry_run: bool = False, uninstall: bool = False) -> list[ClientResult]:
    """Merge (or with `uninstall`, remove) our server entry and skill copy for each client.

    With `clients=None` every known client is considered and those that do not seem
    installed are skipped; naming a client installs it even if its folder is missing.
    """
    targets = select_targets(clients)
    host = Host(home=Path(home), platform=platform, env=env)
    root = Path(os.path.abspath(Path(memory_root).expanduser()))
    launch = ServerLaunch.serve(command, root)
    results: list[ClientResult] = []
    for target in targets:
        if clients is None and not uninstall and not target.is_present(host):
            results.append(ClientResult(
                client=target.name, path=target.config_path(host), action="skipped",
                message=f"{target.title} not found ({target.marker(host)} is missing); "
                        f"name it explicitly to install anyway"))
            continue
        results.append(_sync_config(target, host, launch, dry_run=dry_run, uninstall=uninstall))
        if target.skill_path is not None:
            results.append(_sync_skill(target, host, Path(skill_dir), dry_run=dry_run,
                                       uninstall=uninstall))
    return results


def _sync_config(target: ClientTarget, host: Host, launch: ServerLaunch, *, dry_run: bool,
                 uninstall: bool) -> ClientResult:
    path = target.config_path(host)
    editor = _EDITORS[target.config_format]
    entry = target.entry(launch)

    def result(action: Action, message: str, diff: str = "") -> ClientResult:
        return ClientResult(client=target.name, path=path, action=action, message=message,
                            diff=diff)

    try:
        old = read_text(path)
        if uninstall:
            new = editor.remove(old, entry, previous=_previous_versions(path))
        else:
            new = editor.upsert(old, entry)
    except ConfigSyntaxError as error:
        return result("error", f"{path}: {error}; the file was left untouched")
    except UneditableConfig as error:
        return result("skipped", f"{path}: {error}:\n{error.snippet}")
    except OSError as error:
        return result("error", f"{path}: cannot read: {error}")
    if new == old:
        what = "no ai-memory entry to remove" if uninstall else "already registered"
        return result("unchanged", what)
    action: Action = "removed" if uninstall else ("created" if old is None else "updated")
    diff = unified_diff(path, old, new)
    if dry_run:
        return result(action, f"dry run: {path} not written", diff)
    try:
        saved = _write(path, old, new)
    except OSError as error:
        return result("error", f"{path}: cannot write: {error}")
    return result(action, _describe(target, path, action, deleted=new is None, saved=saved), diff)


def _describe(target: ClientTarget, path: Path, action: Action, *, deleted: bool,
              saved: Path | None) -> str:
    done = {"created": "created", "updated": "merged the ai-memory entry into",
            "removed": "removed the ai-memory entry from"}[action]
    message = f"{done} {path}"
    if deleted:
        message += " (the file held nothing else and was deleted)"
    if saved is not None:
        message += f"; previous version saved as {saved.name}"
    if action != "removed" and target.check:
        message += f"; check with: {target.check}"
    return message


def _write(path: Path, old: str | None, new: str | None) -> Path | None:
    """Apply the change; back up an existing file first unless it held only our entry.

    Clients rewrite their own files while running (Claude Code does, often): if the file
    changed since we read it, nothing is written and the caller is told to run again.
    """
    current = path.read_bytes() if path.exists() else None
    if current != (None if old is None else old.encode("utf-8")):
        raise OSError(f"{path.name} changed while it was being edited; nothing was written, "
                      "run the command again")
    if new is None:
        path.unlink()
        return None
    saved = backup(path) if old is not None else None
    write_atomic(path, new)
    return saved


def _previous_versions(path: Path) -> list[str]:
    """Our backups of `path`, newest first: the evidence of what the file was before us."""
    texts = []
    for saved in sorted(path.parent.glob(f"{path.name}{BACKUP_INFIX}*"), reverse=True):
        try:
            texts.append(saved.read_bytes().decode("utf-8"))
        except (OSError, UnicodeDecodeError):
            continue
    return texts


def _sync_skill(target: ClientTarget, host: Host, skill_dir: Path, *, dry_run: bool,
                uninstall: bool) -> ClientResult:
    assert target.skill_path is not None
    path = target.skill_path(host)
    try:
        change = (remove_skill(path, dry_run=dry_run) if uninstall
                  else install_skill(skill_dir, path, dry_run=dry_run))
    except OSError as error:
        return ClientResult(client=target.name, path=path, action="error",
                            message=f"skill {path}: {error}")
    action: Action = change.action  # type: ignore[assignment]
    return ClientResult(client=target.name, path=path, action=action, message=change.message,
                        diff=change.diff)
