"""`ai-memory setup`: create the memory root, index it, prove search, register clients."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from memory.domain.note_scope import CROSS_CUTTING_FOLDERS
from memory.entrypoints import presenters, status_presenters
from memory.entrypoints.clients.config_files import Change
from memory.entrypoints.settings import Settings, environment_root

WELCOME = """---
memory_id: welcome-to-ai-memory
title: Welcome to ai-memory
type: memory
root_scope: work
primary_scope:
  kind: reference
  id: ai-memory
status: active
tags: [ai-memory, getting-started]
---
# Welcome to ai-memory

This folder is your agents' long-term memory. Every Markdown file here is a note; the
folder is the only truth and everything ai-memory derives (index, graph) can be rebuilt.

## How agents use it

Agents search this memory with the `memory_search` tool before they start work on a
repository or ticket, and cite what they use as `path:Lstart-Lend`.

## Where notes go

- `Repos/<repo>/Notes/` for conventions and decisions of one repository.
- `Repos/<repo>/Tickets/<TICKET-ID>/` for ticket context.
- {cross_cutting} for what applies everywhere.
"""


def welcome_note() -> str:
    return WELCOME.replace("{cross_cutting}", ", ".join(f"`{f}`" for f in CROSS_CUTTING_FOLDERS))


def default_memory_root() -> Path:
    return Path.home() / "AI-Memory"


def ensure_root(root: Path) -> bool:
    """Create the root with a welcome note if it does not exist; True if created."""
    if root.exists() and not root.is_dir():
        raise SystemExit(f"error: {root} exists and is not a folder")
    created = not root.exists()
    root.mkdir(parents=True, exist_ok=True)
    welcome = root / "Welcome to ai-memory.md"
    if not any(root.rglob("*.md")):
        welcome.write_text(welcome_note(), encoding="utf-8")
    return created


def run_setup(args) -> int:
    from memory.entrypoints.clients import entry_name, remote_server
    try:  # refused before anything is created
        entry_name(args.name)
        remote = remote_server(shared=args.shared, url=args.url, token_env=args.token_env)
        if remote and args.root:
            raise ValueError("--url registers a server on another machine, --root a memory "
                             "folder on this one: give one of them")
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    root = None if remote else _memory_root(args.root)
    if root is not None and not args.uninstall and not args.dry_run:
        created = ensure_root(root)
        print(f"memory root: {root}{' (created)' if created else ''}", file=sys.stderr)
        if not args.skip_index:
            status = _index_and_prove(root)
            if status:
                return status
    if args.install_clients or args.uninstall or args.clients or args.shared or args.read_only \
            or remote:
        return _clients(args, root, remote)
    return 0


def _memory_root(given: str | None) -> Path:
    root = Path(given or environment_root() or default_memory_root())
    return root.expanduser().resolve()


def _index_and_prove(root: Path) -> int:
    from memory.entrypoints.container import build
    service = build(Settings.resolve(str(root))).use_cases.service()
    report = service.refresh("full")
    print(status_presenters.refresh_text(report), file=sys.stderr)
    if not report.ok:
        return 1
    packet = service.search("how do agents use ai-memory", status="any")
    print(presenters.packet_text(packet, snippet_lines=2), file=sys.stderr)
    health = service.health()
    print(status_presenters.health_text(health), file=sys.stderr)
    return 0 if health.healthy else 1


def _clients(args, root: Path | None, remote) -> int:
    from memory.entrypoints.clients import (
        CLIENT_NAMES, LauncherNotFound, install_clients, setup_paths,
    )
    clients = _named_clients(args.clients, CLIENT_NAMES)
    try:
        paths = setup_paths()
        results = install_clients(
            home=paths.home, platform=paths.platform, env=paths.env, command=paths.command,
            memory_root=root, skill_dir=paths.skill, clients=clients, name=args.name,
            shared=args.shared, url=args.url, token_env=args.token_env,
            dry_run=args.dry_run, uninstall=args.uninstall, read_only=args.read_only)
    except (ValueError, LauncherNotFound) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    _report(results, args.dry_run, verbose=getattr(args, "verbose", False))
    if not args.uninstall:
        _explain(paths.command, results, clients)
        if remote is not None:
            _explain_token(remote, paths.env)
    return 1 if any(r.action is Change.ERROR for r in results) else 0


def _named_clients(value: str | None, known: tuple[str, ...]) -> list[str] | None:
    """`--clients a,b` (or `all`); None: the clients whose configuration folder exists."""
    if not value:
        return None
    names = [name.strip() for name in value.split(",") if name.strip()]
    return list(known) if names == ["all"] else names


def _report(results, dry_run: bool, *, verbose: bool = False) -> None:
    """What was (or in a dry run, would be) done: the command's result, so on stdout.

    A dry run shows the diff of each client configuration (a few lines of the user's own
    file); the skill's files, ours and hundreds of lines long, get a line each unless
    `verbose` asks for their diffs too.
    """
    for r in results:
        print(f"{r.client:<15} {r.action:<9} {r.path}" + (f"  {r.message}" if r.message else ""))
        if not dry_run:
            continue
        for change in r.files:
            if r.skill and not verbose:
                print(f"    {change.summary()}")
            elif change.diff:
                print(change.diff, end="" if change.diff.endswith("\n") else "\n")
    if dry_run and not verbose and any(r.skill and r.files for r in results):
        print("(the skill's files are summarised: --verbose shows their diffs)")


def _explain(command: tuple[str, ...], results, clients: list[str] | None) -> None:
    if clients is None and all(r.action is Change.SKIPPED for r in results):
        print("no client was found (none of their configuration folders exists); name them "
              "with --clients codex,claude-code,... or --clients all", file=sys.stderr)
    if len(command) > 1:
        print(f"note: this ran in uv's throw-away cache environment, so clients start "
              f"`{shlex.join(command)}`, which rebuilds it from uv's cache without network; "
              "`uv tool install` gives a lasting install", file=sys.stderr)


def _explain_token(remote, env) -> None:
    """What the entries need at connect time that setup cannot write: the token itself."""
    if remote.token_env is None:
        if not remote.on_this_machine:
            print(f"note: {remote.url} is on another machine, whose server requires "
                  "authentication. Clients that do OAuth sign in on first use (server run with "
                  "--auth oauth); for API tokens (--auth tokens) put yours in an environment "
                  "variable and register again with it, e.g. `export AI_MEMORY_TOKEN=aim_...` "
                  f"then `ai-memory setup --url {remote.url} --token-env AI_MEMORY_TOKEN`",
                  file=sys.stderr)
        return
    if not env.get(remote.token_env, "").strip():
        print(f"note: ${remote.token_env} is not set here; each client reads it from its own "
              f"environment when it connects: set it where they start (your shell profile; "
              "apps started from the desktop may need it in their login environment)",
              file=sys.stderr)
