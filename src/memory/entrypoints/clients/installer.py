"""Register (or unregister) the ai-memory MCP server with each client: one result per file."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from importlib.resources.abc import Traversable
from pathlib import Path

from memory.entrypoints.clients import (
    claude_code, claude_desktop, codex, copilot, opencode, vscode,
)
from memory.entrypoints.clients.config_files import (
    BACKUP_INFIX, Change, FileDiff, backup, read_text, write_atomic,
)
from memory.entrypoints.clients.errors import ConfigSyntaxError, UneditableConfig
from memory.entrypoints.clients.host import Host
from memory.entrypoints.clients.json_config import JsonConfigEditor
from memory.entrypoints.clients.launcher import as_command
from memory.entrypoints.clients.skill_copy import SkillChange, install_skill, remove_skill
from memory.entrypoints.clients.target import (
    ClientTarget, Registration, RemoteServer, ServerLaunch, entry_name, is_our_entry,
)
from memory.entrypoints.clients.toml_config import TomlConfigEditor


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
    action: Change
    message: str = ""
    files: tuple[FileDiff, ...] = ()  # the change to each file (a skill folder has several)
    skill: bool = False  # a copy of our skill, not the client's own configuration

    @property
    def diff(self) -> str:
        return "".join(f.diff for f in self.files)


def select_targets(clients: Sequence[str] | None) -> list[ClientTarget]:
    """The named clients in our canonical order; an unknown name is a ValueError."""
    if clients is None:
        return list(TARGETS.values())
    unknown = [name for name in clients if name not in TARGETS]
    if unknown:
        raise ValueError(f"unknown client(s) {', '.join(map(repr, unknown))}; "
                         f"valid clients: {', '.join(CLIENT_NAMES)}")
    return [target for name, target in TARGETS.items() if name in clients]


@dataclass(frozen=True, kw_only=True)
class _Run:
    """One invocation: where we are, what the entries launch, and what to do."""

    host: Host
    registration: Registration
    name: str  # our key in each server table
    dry_run: bool
    uninstall: bool


@dataclass(frozen=True, kw_only=True)
class _ConfigChange:
    result: ClientResult
    planned: bool = False  # the change went through (in a dry run: would go through)
    text: str | None = None  # then the file afterwards; None: absent


def install_clients(*, home: Path, platform: str, env: Mapping[str, str],
                    command: str | Sequence[str], memory_root: Path | None,
                    skill_dir: Traversable, clients: Sequence[str] | None = None,
                    name: str | None = None, shared: bool = False, url: str | None = None,
                    token_env: str | None = None, dry_run: bool = False,
                    uninstall: bool = False, read_only: bool = False) -> list[ClientResult]:
    """Merge (or with `uninstall`, remove) our server entry and skill copy for each client.

    With `clients=None` the clients that seem installed are registered and the others are
    `skipped` (an uninstall considers them all); naming a client registers it regardless.
    `command` is the executable, or the executable and its leading arguments. `name`
    registers `ai-memory-<name>`, so entries for several memory roots sit side by side.
    Entries start `serve --root` by default; `shared` registers the bridge to the root's
    daemon; `url` (with the token's variable `token_env`) a server someone else runs.
    `read_only` registers `serve --read-only`, without the write tools.
    """
    targets = select_targets(clients)
    host = Host(home=Path(home), platform=platform, env=env)
    run = _Run(host=host, registration=registration(as_command(command), memory_root,
                                                     shared=shared, url=url,
                                                     token_env=token_env,
                                                     read_only=read_only),
               name=entry_name(name), dry_run=dry_run, uninstall=uninstall)
    chosen = [t for t in targets if clients is not None or uninstall or t.is_present(host)]
    changes = {target.name: _sync_config(target, run) for target in chosen}
    results = [changes[t.name].result if t in chosen else _not_found(t, host) for t in targets]
    return results + _sync_skills(chosen, run, skill_dir, changes)


def registration(command: tuple[str, ...], memory_root: Path | None, *, shared: bool = False,
                 url: str | None = None, token_env: str | None = None,
                 read_only: bool = False) -> Registration:
    """What the entries launch or reach (ValueError for a contradiction or a bad value)."""
    remote = remote_server(shared=shared, url=url, token_env=token_env)
    if read_only and (shared or remote is not None):
        # The bridge cannot take tools away from a server it only forwards to.
        raise ValueError("--read-only registers a server of the client's own: a shared daemon "
                         "or a --url server is made read-only where it runs (serve --read-only)")
    if remote is not None:
        return Registration(launch=ServerLaunch.bridge(command, remote), remote=remote)
    if memory_root is None:
        raise ValueError("a memory root is needed unless the entries reach a --url")
    root = Path(os.path.abspath(Path(memory_root).expanduser()))
    if shared:
        return Registration(launch=ServerLaunch.connect(command, root))
    return Registration(launch=ServerLaunch.serve(command, root, read_only))


def remote_server(*, shared: bool, url: str | None,
                  token_env: str | None) -> RemoteServer | None:
    """The `--url` server, checked with the flags around it; None without one."""
    if url is None:
        if token_env is not None:
            raise ValueError("--token-env names the token of a --url server; add --url URL")
        return None
    if shared:
        raise ValueError("--shared (the local daemon of a root) and --url (a server "
                         "elsewhere) exclude each other")
    return RemoteServer.parse(url, token_env)


def _not_found(target: ClientTarget, host: Host) -> ClientResult:
    return ClientResult(client=target.name, path=target.config_path(host), action=Change.SKIPPED,
                        message=f"{target.title} not found ({target.marker(host)} is missing); "
                                f"name it with --clients to register it anyway")


def _sync_config(target: ClientTarget, run: _Run) -> _ConfigChange:
    path = target.config_path(run.host)
    editor = _EDITORS[target.config_format]
    entry = replace(target.entry_for(run.registration), name=run.name)

    def result(action: Change, message: str, diff: FileDiff | None = None, *,
               planned: bool = False, text: str | None = None) -> _ConfigChange:
        if planned and not run.uninstall:
            message += _bridge_note(target, run.registration)
        return _ConfigChange(result=ClientResult(client=target.name, path=path, action=action,
                                                 message=message,
                                                 files=() if diff is None else (diff,)),
                             planned=planned, text=text)

    try:
        old = read_text(path)
        if run.uninstall:
            new = editor.remove(old, entry, previous=_previous_versions(path))
        else:
            new = editor.upsert(old, entry)
    except ConfigSyntaxError as error:
        return result(Change.ERROR, f"{path}: {error}; the file was left untouched")
    except UneditableConfig as error:
        return result(Change.SKIPPED, f"{path}: {error}:\n{error.snippet}")
    except OSError as error:
        return result(Change.ERROR, f"{path}: cannot read: {error}")
    if new == old:
        what = f"no {entry.name} entry to remove" if run.uninstall else "already registered"
        return result(Change.UNCHANGED, what, planned=True, text=old)
    action = Change.REMOVED if run.uninstall else (
        Change.CREATED if old is None else Change.UPDATED)
    diff = FileDiff.between(path, old, new)
    if run.dry_run:
        return result(action, f"dry run: {path} not written", diff, planned=True, text=new)
    try:
        saved = _write(path, old, new)
    except OSError as error:
        return result(Change.ERROR, f"{path}: cannot write: {error}")
    message = _describe(target, path, entry.name, action, deleted=new is None, saved=saved)
    return result(action, message, diff, planned=True, text=new)


def _bridge_note(target: ClientTarget, registration: Registration) -> str:
    if registration.remote is None or target.remote_entry is not None:
        return ""
    return (f" ({target.title} has no entry for a remote server: it starts the stdio bridge "
            f"`ai-memory connect --url`, which relays to {registration.remote.url})")


def _describe(target: ClientTarget, path: Path, name: str, action: Change, *, deleted: bool,
              saved: Path | None) -> str:
    done = {Change.CREATED: "created", Change.UPDATED: f"merged the {name} entry into",
            Change.REMOVED: f"removed the {name} entry from"}[action]
    message = f"{done} {path}"
    if deleted:
        message += " (the file held nothing else and was deleted)"
    if saved is not None:
        message += f"; previous version saved as {saved.name}"
    if action is not Change.REMOVED and target.check:
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


def _sync_skills(chosen: list[ClientTarget], run: _Run, source: Traversable,
                 changes: Mapping[str, _ConfigChange]) -> list[ClientResult]:
    """One copy per skills folder, however many of the clients read it; copies that earlier
    versions put in a client's own folder go, so that no client loads the skill twice."""
    folders: dict[Path, list[str]] = {}
    for target in chosen:
        if target.skill_path is not None:
            folders.setdefault(target.skill_path(run.host), []).append(target.name)
    results = [_sync_skill(path, "+".join(names), run, source, changes)
               for path, names in folders.items()]
    results += [_remove_legacy(target, old, run) for target in chosen
                for old in target.legacy_skill_paths(run.host) if old.is_symlink() or old.exists()]
    return results


def _remove_legacy(target: ClientTarget, old: Path, run: _Run) -> ClientResult:
    now = target.skill_path(run.host) if target.skill_path is not None else None
    return _skill_result(target.name, old, lambda: remove_skill(old, dry_run=run.dry_run),
                         note=f"an earlier copy; {target.title} now reads {now}")


def _sync_skill(path: Path, client: str, run: _Run, source: Traversable,
                changes: Mapping[str, _ConfigChange]) -> ClientResult:
    if not run.uninstall:
        return _skill_result(client, path,
                             lambda: install_skill(source, path, dry_run=run.dry_run))
    users = _still_registered(path, run, changes)
    if users:
        return ClientResult(client=client, path=path, action=Change.UNCHANGED, skill=True,
                            message=f"skill kept: {', '.join(users)} still register ai-memory")
    return _skill_result(client, path, lambda: remove_skill(path, dry_run=run.dry_run))


def _skill_result(client: str, path: Path, change: Callable[[], SkillChange],
                  note: str = "") -> ClientResult:
    try:
        done = change()
    except OSError as error:
        return ClientResult(client=client, path=path, action=Change.ERROR, skill=True,
                            message=f"skill {path}: {error}")
    message = f"{done.message} ({note})" if note else done.message
    return ClientResult(client=client, path=path, action=done.action, message=message,
                        files=done.files, skill=True)


def _still_registered(path: Path, run: _Run, changes: Mapping[str, _ConfigChange]) -> list[str]:
    """Clients reading the skill at `path` whose config keeps an entry of ours, after this
    run; a config we cannot read counts too, since we cannot tell."""
    users = []
    for target in TARGETS.values():
        if target.skill_path is None or target.skill_path(run.host) != path:
            continue
        change = changes.get(target.name)
        try:
            text = (change.text if change is not None and change.planned
                    else read_text(target.config_path(run.host)))
            names = _EDITORS[target.config_format].entry_names(
                text, target.entry_for(run.registration).container)
        except (ConfigSyntaxError, OSError):
            users.append(f"{target.name} (config unreadable)")
            continue
        if any(is_our_entry(name) for name in names):
            users.append(target.name)
    return users
