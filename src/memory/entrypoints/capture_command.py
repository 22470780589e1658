"""`ai-memory write` and `ai-memory edit`, the CLI mirrors of memory_write and memory_edit, and
the serve flags that switch writes off or commit them."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from memory.domain.errors import InvalidRequest

COMMANDS = ("write", "edit")
CLI_AGENT = "ai-memory-cli"
OPERATIONS = ("append", "replace_lines", "set_fields", "supersede", "archive", "move")
TEXT_OPERATIONS = ("append", "replace_lines")


def add_commands(sub, parents: list[argparse.ArgumentParser]) -> None:
    """The write and edit subcommands; parents give --root, --state-dir and --json."""
    s = sub.add_parser("write", parents=parents, help="save a new note (as memory_write)")
    s.add_argument("--title", required=True, help="the note's title, one line")
    s.add_argument("--body", default="-", metavar="FILE",
                   help="a Markdown file holding the body, without front matter "
                        "(default '-': read stdin)")
    where = s.add_argument_group("where the note belongs (one of them, or --path)")
    where.add_argument("--repository", "--repo", dest="repository", metavar="KEY",
                       help="a note about this repository: Repos/KEY/Notes/")
    where.add_argument("--ticket", metavar="ID",
                       help="with --repository: a note of this ticket, e.g. PAY-142")
    where.add_argument("--project", metavar="KEY",
                       help="a note about this project: Projects/KEY/Notes/")
    where.add_argument("--kind", choices=("decision", "tool", "workflow", "reference", "person",
                                          "area"), help="a cross-cutting note, in its own folder")
    where.add_argument("--path", help="an explicit path relative to the root, ending in .md")
    s.add_argument("--tag", dest="tags", action="append", metavar="TAG", help="repeatable")
    s.add_argument("--related", action="append", metavar="NOTE",
                   help="an existing note it relates to (repeatable)")
    s.add_argument("--status", choices=("active", "needs-review", "superseded", "archived"),
                   help="the note's status (default: active)")
    s.add_argument("--supersedes", metavar="NOTE", help="an existing note this one replaces")
    s.add_argument("--allow-duplicate", action="store_true",
                   help="write even if the scope holds a note on the same subject")
    _agent(s)
    e = sub.add_parser("edit", parents=parents, help="change a note (as memory_edit)")
    e.add_argument("identity", help="memory_id, path relative to the root, or title")
    e.add_argument("content_hash", help="the hash `ai-memory get` shows (its 12 characters "
                                        "or the full content_hash of --json, write or edit)")
    e.add_argument("operation", choices=OPERATIONS, help="what to change: " + ", ".join(OPERATIONS))
    e.add_argument("--text", default="-", metavar="FILE",
                   help="append, replace_lines: a file holding the text (default '-': stdin)")
    e.add_argument("--heading", help="append: the heading to append under")
    e.add_argument("--start-line", type=int, help="replace_lines: the first line (1-based)")
    e.add_argument("--end-line", type=int, help="replace_lines: the last line (inclusive)")
    e.add_argument("--fields", metavar="JSON",
                   help='set_fields: a JSON object, e.g. \'{"status": "needs-review"}\'')
    e.add_argument("--superseded-by", metavar="NOTE", help="supersede: the replacing note")
    e.add_argument("--new-path", metavar="PATH", help="move: the new path")
    _agent(e)


def _agent(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--agent", default=CLI_AGENT,
                        help=f"who writes, for provenance and commits (default {CLI_AGENT})")


def add_serve_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--read-only", action="store_true",
                        help="serve without the write tools (memory_write, memory_edit)")
    parser.add_argument("--git-commit", action="store_true",
                        help="commit each write or edit in the root's git work tree, authored "
                             "as the client that asked (never pushed)")


def check_serve_flags(settings) -> None:
    """Refuse --git-commit where it cannot work, before the server starts."""
    if not settings.git_commit:
        return
    if settings.read_only:
        raise InvalidRequest("--git-commit commits writes, and a --read-only server makes "
                             "none: give one of them")
    from memory.adapters.git.note_history import GitNoteHistory
    GitNoteHistory.for_root(settings.root)


def run_capture(args, settings):
    """The write or edit asked for: (its result, the presenter of its text)."""
    from memory.application.capture.requests import EditRequest, WriteRequest
    from memory.domain.new_note import Author
    from memory.entrypoints import capture_presenters
    from memory.entrypoints.container import build
    capture = build(settings).use_cases.capture()
    author = Author.named(args.agent, source="cli")
    if args.command == "write":
        return capture.write(WriteRequest.parse(
            title=args.title, body=_read(args.body, "--body"), repository=args.repository,
            project=args.project, ticket=args.ticket, kind=args.kind, tags=args.tags,
            related=args.related, status=args.status, supersedes=args.supersedes,
            path=args.path, allow_duplicate=args.allow_duplicate), author), \
            capture_presenters.write_text
    text = _read(args.text, "--text") if args.operation in TEXT_OPERATIONS else None
    return capture.edit(EditRequest.parse(
        identity=args.identity, content_hash=args.content_hash, operation=args.operation,
        text=text or None, heading=args.heading, start_line=args.start_line,
        end_line=args.end_line, fields=_fields(args.fields), superseded_by=args.superseded_by,
        new_path=args.new_path), author), capture_presenters.edit_text


def _read(source: str, flag: str) -> str:
    try:
        if source == "-":
            return sys.stdin.read()
        return Path(source).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidRequest(f"{flag} {source}: cannot be read as UTF-8 text ({exc})") from exc


def _fields(raw: str | None):
    if raw is None:
        return None
    try:
        return json.loads(raw)
    except ValueError as exc:
        raise InvalidRequest(f"--fields must be a JSON object: {exc}") from exc
