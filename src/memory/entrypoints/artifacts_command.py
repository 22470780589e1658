"""`ai-memory artifacts ingest|check|backup|restore`: the store of raw records (conversations
and their messages) from the command line; progress and warnings on stderr."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from memory.entrypoints.settings import Settings

if TYPE_CHECKING:
    from memory.application.artifacts.intake import IntakeSummary
    from memory.domain.artifacts import CheckReport

# The formats' names; their readers (and apsw) load only when the command runs, so importing the
# command line for `serve` or the bridge stays light.
FORMATS = ("chat-jsonl",)


def add_commands(sub, common: list[argparse.ArgumentParser]) -> None:
    s = sub.add_parser("artifacts", help="raw records of conversations: ingest, check, "
                                         "backup, restore")
    actions = s.add_subparsers(dest="artifacts_command", required=True, metavar="ACTION",
                               help="ingest, check, backup or restore")
    a = actions.add_parser("ingest", parents=common,
                           help="store conversations from files (validated whole per file)")
    a.add_argument("--format", required=True, choices=FORMATS,
                   help="chat-jsonl: one JSON object a line with conversation, seq and text "
                        "(README, 'Raw records')")
    a.add_argument("--source", help="the name these records are kept under (default: the "
                                    "format's name)")
    a.add_argument("paths", nargs="+", metavar="PATH", help="a file, or a folder: every file "
                                                            "of the format under it")
    actions.add_parser("check", parents=common, help="recompute every record's digest")
    a = actions.add_parser("backup", parents=common,
                           help="write a checked copy and its sha256 (DEST.sha256)")
    a.add_argument("dest", help="the copy's file (must not exist)")
    a = actions.add_parser("restore", parents=common,
                           help="replace the store with a copy that matches its sha256 and "
                                "passes check")
    a.add_argument("src", help="a copy made by `ai-memory artifacts backup`")


def run_artifacts(args: argparse.Namespace, settings: Settings) -> int:
    from memory.adapters.artifacts.chat_jsonl import ChatJsonlReader
    from memory.adapters.artifacts.sqlite_store import SqliteArtifactStore
    from memory.adapters.statefiles.state_dir import ensure_state_dir
    from memory.application.artifacts.intake import ArtifactIntake

    readers = {"chat-jsonl": ChatJsonlReader}
    store = SqliteArtifactStore(ensure_state_dir(settings.state_dir))
    action = args.artifacts_command
    if action == "ingest":
        intake = ArtifactIntake(readers[args.format](), store)
        summary = intake.ingest(args.source or args.format, args.paths, _progress)
        return _ingested(summary, args.json)
    if action == "backup":
        digest = store.backup(args.dest)
        report = store.check()
        _say(args.json, {"backup": args.dest, "sha256": digest, "records": report.records,
                         "conversations": report.conversations},
             f"copied {report.records} records of {report.conversations} conversations to "
             f"{args.dest} (sha256 {digest}, in {args.dest}.sha256)")
        return 0
    report = store.restore(args.src) if action == "restore" else store.check()
    return _checked(report, args.json, f"restored from {args.src}: " if action == "restore" else "")


def _progress(number: int, total: int, path: str) -> None:
    print(f"[{number}/{total}] {path}", file=sys.stderr, flush=True)


def _ingested(summary: IntakeSummary, as_json: bool) -> int:
    for warning in summary.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    _say(as_json, {"source": summary.source, "files": len(summary.files),
                   "conversations": summary.conversations, "records": summary.records,
                   "skipped": summary.skipped, "refused": summary.refused,
                   "warnings": list(summary.warnings)},
         f"source {summary.source}: {len(summary.files)} files, {summary.conversations} "
         f"conversations, {summary.records} records, {summary.skipped} skipped, "
         f"{summary.refused} refused")
    return 2 if summary.refused else 0


def _checked(report: CheckReport, as_json: bool, prefix: str) -> int:
    for problem in report.problems:
        print(f"problem: {problem}", file=sys.stderr)
    verdict = "ok" if report.ok else f"{len(report.problems)} problems"
    _say(as_json, {"ok": report.ok, "conversations": report.conversations,
                   "records": report.records, "problems": list(report.problems)},
         f"{prefix}{report.conversations} conversations, {report.records} records: {verdict}")
    return 0 if report.ok else 1


def _say(as_json: bool, data: dict, text: str) -> None:
    print(json.dumps(data, indent=2, ensure_ascii=False) if as_json else text)
