"""The `ai-memory` command line: what the MCP tools do, plus serving, set-up and evaluation.

Every MCP tool has its command (search, explain, get, neighbors, path, refresh, health,
feedback, write, edit), beside serve, setup, eval, graph, artifacts (the store of raw
records) and the shared server (token, daemon, connect).

Results go to stdout (text, or JSON with --json); warnings, progress and errors go to
stderr, except that under --json an error is a JSON object on stdout, so that a program
reading the output always reads JSON. Exit codes: 0 ok, 1 failed (or unhealthy), 2 invalid
request or usage, 3 not found, 4 busy, 5 conflict (the note changed since it was read),
130 interrupted, 141 reader gone.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from contextlib import suppress

from memory import __version__
from memory.domain.errors import AiMemoryError, InvalidRequest
from memory.entrypoints import (artifacts_command, capture_command, graph_command,
                                note_presenters, presenters, status_presenters)
from memory.entrypoints.cli_progress import notices_on_stderr
from memory.entrypoints.error_kinds import kind_of
from memory.entrypoints.settings import Settings
from memory.entrypoints.wording import error_words, in_cli_words

SCOPE_FLAGS = ("root_scope", "repository", "project", "ticket", "status", "path_prefix")
# (kind, exit code) of each error ai-memory raises on purpose, most specific first.


class UsageError(Exception):
    """A command line argparse refuses, raised instead of exiting so --json can report it."""

    def __init__(self, parser: argparse.ArgumentParser, message: str):
        super().__init__(message)
        self.parser = parser


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):
        raise UsageError(self, message)


def _shared_options():
    """The options commands share: where the memory is, how to print, and the scope."""
    located = _Parser(add_help=False)
    located.add_argument("--root", help="memory root folder (default: $AI_MEMORY_ROOT)")
    located.add_argument("--state-dir", help="derived state folder (default: ROOT/.ai-memory)")
    located.add_argument("--store", metavar="URL",
                         help="keep the index in PostgreSQL + pgvector at this postgresql:// "
                              "URL instead of SQLite in the state folder "
                              "(default: $AI_MEMORY_STORE)")
    output = _Parser(add_help=False)
    output.add_argument("--json", action="store_true",
                        help="print the structured result as JSON (an error as a JSON object)")
    return located, output, _scope_options("active"), _scope_options("any")


def _scope_options(status: str) -> argparse.ArgumentParser:
    scoped = _Parser(add_help=False)
    scoped.add_argument("--root-scope", dest="root_scope", metavar="SCOPE",
                        help="only notes of this root scope: work or personal")
    scoped.add_argument("--repository", "--repo", dest="repository", metavar="KEY",
                        help="only notes about this repository (plus cross-cutting notes)")
    scoped.add_argument("--project", metavar="KEY",
                        help="only notes about this project (plus cross-cutting notes)")
    scoped.add_argument("--ticket", metavar="ID", help="only notes about this ticket, e.g. PAY-142")
    scoped.add_argument("--status", default=status,
                        help=f"note status to admit: active, needs-review, superseded, archived "
                             f"or any (default: {status})")
    scoped.add_argument("--path-prefix", dest="path_prefix", metavar="FOLDER",
                        help="only notes under this folder of the root (whole folder names)")
    return scoped


def _operation_commands(sub, located, output, scoped, graph_scoped) -> None:
    """serve, then the operations from search to health (feedback and setup follow)."""
    s = sub.add_parser("serve", parents=[located], help="run the MCP stdio server")
    s.add_argument("--no-watch", action="store_true", help="do not watch the root for changes")
    capture_command.add_serve_flags(s)
    _http_flags(s)
    common = [located, output]
    limit = _Parser(add_help=False)
    limit.add_argument("--limit", type=int, default=8, help="most evidence items (1-50, default 8)")
    s = sub.add_parser("search", parents=[*common, scoped, limit],
                       help="search memory, cite evidence")
    s.add_argument("query", help="what you want to know, in plain words")
    s = sub.add_parser("explain", parents=[*common, scoped, limit],
                       help="why a search ranks as it does")
    s.add_argument("query", help="the search to explain")
    s.add_argument("--identity", help="a note to explain the presence or absence of")
    s = sub.add_parser("get", parents=common, help="read a note by memory_id, path or title")
    s.add_argument("identity", help="memory_id, path relative to the root, or title")
    s.add_argument("--start-line", type=int, help="first line to show (1-based)")
    s.add_argument("--end-line", type=int, help="last line to show (inclusive)")
    s = sub.add_parser("neighbors", parents=[*common, graph_scoped],
                       help="notes related to a note in the graph")
    s.add_argument("identity", help="memory_id, path relative to the root, or title")
    s.add_argument("--depth", type=int, default=1, help="graph hops to follow (1-4, default 1)")
    s = sub.add_parser("path", parents=[*common, graph_scoped],
                       help="relationship path between two notes")
    s.add_argument("source", help="the note the path starts at")
    s.add_argument("target", help="the note the path ends at")
    s = sub.add_parser("refresh", parents=common, help="rebuild the index (and graph)")
    s.add_argument("--mode", default="index", choices=("index", "full"),
                   help="index: re-index changed notes (default); full: also rebuild the graph")
    s.add_argument("--force", action="store_true", help="publish even if nothing changed")
    sub.add_parser("health", parents=common, help="state of index, graph and model")


def _parser() -> argparse.ArgumentParser:
    located, output, scoped, graph_scoped = _shared_options()
    common = [located, output]
    p = _Parser(prog="ai-memory", description=__doc__.split("\n\n")[0])
    p.add_argument("--version", action="version", version=f"ai-memory {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _operation_commands(sub, located, output, scoped, graph_scoped)
    s = sub.add_parser("feedback", parents=common, help="record whether a result helped")
    s.add_argument("query", help="the search the result came from")
    s.add_argument("memory_id", help="the note rated")
    s.add_argument("relevance", choices=("relevant", "irrelevant", "missing"),
                   help="relevant or irrelevant for a result; missing for a note not returned")
    s.add_argument("--note", help="a short reason, in your own words")
    s = sub.add_parser("setup", help="create a memory root, index it, register MCP clients")
    s.add_argument("--root", "--memory-root", dest="root",
                   help="memory root folder (default: $AI_MEMORY_ROOT, else ~/AI-Memory)")
    s.add_argument("--install-clients", action="store_true",
                   help="register the server with every client whose configuration folder "
                        "exists (or those named in --clients); implied by --shared, --url "
                        "and --read-only")
    s.add_argument("--clients", metavar="NAMES",
                   help="comma-separated clients to register even if not found, or 'all': "
                        "codex, claude-code, claude-desktop, copilot, opencode, vscode")
    s.add_argument("--only-present", action="store_true", help=argparse.SUPPRESS)  # the default
    s.add_argument("--name", help="register this root as ai-memory-NAME, beside other roots "
                                  "(default: the entry is ai-memory); --uninstall removes it")
    how = s.add_mutually_exclusive_group()
    how.add_argument("--shared", action="store_true",
                     help="register `ai-memory connect --root DIR` (a small stdio bridge) so "
                          "that all clients share the root's one daemon")
    how.add_argument("--url", help="register a server someone runs, e.g. "
                                   "https://memory.example.com/mcp: clients that speak HTTP get "
                                   "the URL, Claude Desktop the stdio bridge; no local root")
    s.add_argument("--token-env", metavar="VAR",
                   help="with --url: the environment variable holding the bearer token "
                        "(only its name is written, never the token)")
    s.add_argument("--read-only", action="store_true",
                   help="register `serve --read-only`: agents search and read, but get no "
                        "memory_write or memory_edit")
    s.add_argument("--dry-run", action="store_true",
                   help="print what would change and write nothing: the diff of each "
                        "client's configuration, a line per skill file")
    s.add_argument("--verbose", action="store_true",
                   help="with --dry-run: the full diff of the skill's files too")
    s.add_argument("--uninstall", action="store_true",
                   help="remove our entry (and the skill, once no entry is left)")
    s.add_argument("--skip-index", action="store_true", help="do not build the index")
    _shared_server_commands(sub, common)
    capture_command.add_commands(sub, common)
    artifacts_command.add_commands(sub, common)
    graph_command.add_arguments(sub.add_parser(
        "graph", parents=common, help="write an interactive HTML page of the graph"))
    s = sub.add_parser(
        "eval", parents=common, help="score labelled queries against a memory root",
        description="Search each labelled query of QUERIES in the memory root and score the "
                    "hits against its evidence lines: R@k, H@k, EH@k, MRR@10, nDCG@10, L@k, "
                    "no-answer accuracy, scope leakage, latency, and a leave-one-fold-out "
                    "report. The query format and every metric are described in "
                    "docs/benchmarks.md (section 'Scoring labelled queries'); a worked example "
                    "is benchmarks/fixtures/eval-example/.")
    s.add_argument("queries", help="a JSONL file of labelled queries, one JSON object a line: "
                                   "qid, question, evidence [{path, line}], optional scope, "
                                   "category, project")
    s.add_argument("--k", default="1,3,5,10", help="cut-offs to score (default 1,3,5,10)")
    s.add_argument("--results", help="also write per-query results JSONL here")
    s.add_argument("--signals", default="lexical,semantic,graph",
                   help="comma-separated signals to use (ablations)")
    s.add_argument("--folds", default="project",
                   help="query field whose values are the cross-validation folds ('none': off)")
    s.add_argument("--control", help="results JSONL of the same settings run again (noise band)")
    return p


def _http_flags(s: argparse.ArgumentParser) -> None:
    h = s.add_argument_group("Streamable HTTP (one server for many clients)")
    h.add_argument("--http", nargs="?", const="", metavar="[HOST:]PORT",
                   help="serve over HTTP at /mcp instead of stdio (default 127.0.0.1:8765)")
    h.add_argument("--auth", choices=("local", "none", "tokens", "oauth"),
                   help="local (the default on loopback): the owner's secret in "
                        "STATE/local-token, which `connect` sends; none: every account on "
                        "this machine gets in; tokens or oauth: required off loopback")
    h.add_argument("--issuer", help="--auth oauth: the issuer whose JWTs are accepted")
    h.add_argument("--audience", help="--auth oauth: the audience tokens must be issued for")
    h.add_argument("--jwks", metavar="URL|FILE", help="--auth oauth: the issuer's signing keys")
    h.add_argument("--public-url", help="the URL clients use (behind a TLS proxy); its Host and "
                                        "Origin are admitted, and it names the resource")
    h.add_argument("--allow-origin", action="append", default=[], metavar="ORIGIN",
                   help="a browser origin to admit (none is by default)")
    h.add_argument("--max-concurrent", type=int, help="requests in flight per token (default 8)")
    h.add_argument("--rate-limit", type=int, metavar="N",
                   help="requests a minute per token, N at once as a burst (default 600; 429)")
    h.add_argument("--max-sessions-per-token", type=int, metavar="N",
                   help="open MCP sessions per token (default 64; 429)")
    h.add_argument("--max-connections", type=int, metavar="N",
                   help="open connections, all clients together (default 256; 503)")
    h.add_argument("--header-timeout", type=float, metavar="S",
                   help="seconds to send a request's headers (default 10; 408, closed)")
    h.add_argument("--body-timeout", type=float, metavar="S",
                   help="seconds to send a request's body (default 30; 408)")
    h.add_argument("--daemon-record", action="store_true", help=argparse.SUPPRESS)


def _shared_server_commands(sub, common: list[argparse.ArgumentParser]) -> None:
    s = sub.add_parser("token", help="API tokens for serve --http --auth tokens")
    tokens = s.add_subparsers(dest="token_command", required=True, metavar="ACTION",
                              help="create, list or revoke")
    t = tokens.add_parser("create", parents=common, help="make a token; it is printed once")
    t.add_argument("--name", required=True, help="who or what holds the token, e.g. ci-bot")
    t.add_argument("--scope", choices=("read", "write"), default="read",
                   help="read: the read-only tools; write: also the tools that change state, "
                        "such as refresh and feedback (default: read)")
    tokens.add_parser("list", parents=common, help="tokens by name and scope (never secrets)")
    t = tokens.add_parser("revoke", parents=common, help="revoke a token by name")
    t.add_argument("name", help="the name the token was created with")
    s = sub.add_parser("daemon", parents=common, help="the root's shared local HTTP server")
    s.add_argument("action", choices=("start", "stop", "status"),
                   help="start, stop or report on the daemon of --root")
    s = sub.add_parser("connect", parents=common,
                       help="stdio bridge to the root's shared server (started if needed)")
    s.add_argument("--url", help="bridge to this server instead (e.g. a team server)")
    s.add_argument("--token-env", metavar="VAR", help="send the bearer token in $VAR")


def main(argv: Sequence[str] | None = None) -> int:
    # Owner-only, whatever the user's umask: the state folder (index, logs, caches, daemon
    # record, credentials) and the notes ai-memory creates are this account's alone.
    previous = os.umask(0o077)
    try:
        return _main(argv)
    finally:
        os.umask(previous)  # for a caller in the same process (tests)


def _main(argv: Sequence[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    as_json = "--json" in argv
    notices_on_stderr()  # the model's one-time ONNX export says so: ~30 s of silence otherwise
    try:
        code = _dispatch(_parser().parse_args(argv))
        sys.stdout.flush()  # a reader gone away shows here, not at the interpreter's exit
        return code
    except BrokenPipeError:
        # `ai-memory search ... | head`: the reader has what it wanted. Point stdout at the
        # null device so that the interpreter's last flush does not fail again.
        with suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # what a shell reports for a command ended by SIGPIPE
    except UsageError as exc:
        if as_json:
            return _failed(as_json, "usage", f"{exc.parser.prog}: {exc}", 2)
        exc.parser.print_usage(sys.stderr)
        print(f"{exc.parser.prog}: error: {exc}", file=sys.stderr)  # as argparse says it
        return 2
    except KeyboardInterrupt:
        return 130
    except (AiMemoryError, OSError) as exc:  # OSError: a file could not be read or written
        kind, code = kind_of(exc)
        return _failed(as_json, kind, error_words(exc), code)


def _failed(as_json: bool, kind: str, message: str, code: int) -> int:
    if as_json:
        print(json.dumps({"error": {"kind": kind, "message": message, "exit_code": code}},
                         ensure_ascii=False))
    else:
        print(f"{kind}: {message}", file=sys.stderr)
    return code


def _settings(args, must_exist: bool = True) -> Settings:
    return Settings.resolve(args.root, args.state_dir, watch=not getattr(args, "no_watch", False),
                            must_exist=must_exist, read_only=getattr(args, "read_only", False),
                            git_commit=getattr(args, "git_commit", False),
                            store=getattr(args, "store", None))


def _connect_settings(args) -> Settings | None:
    """The root `connect` bridges to; with --url, the root whose local credential a loopback
    server takes, when one is named (else none: the URL is all there is)."""
    if not args.url:
        return _settings(args)
    try:
        return _settings(args)
    except InvalidRequest:
        return None


def _service(args):
    from memory.application.search.config import GatherConfig, SearchConfig
    from memory.entrypoints.container import build
    app = build(_settings(args), one_shot=True)
    # A one-shot command has nothing better to do than wait for the model to load.
    app.use_cases.search_config.override(SearchConfig(gather=GatherConfig(semantic_wait_s=120.0)))
    return app.use_cases.service()


def _emit(args, result, present) -> None:
    """The result on stdout, its warnings on stderr; every message in the CLI's words."""
    result = in_cli_words(result)
    warnings = getattr(result, "warnings", ())
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if args.json:
        from memory.entrypoints.converter import to_json
        print(json.dumps(to_json(result), indent=2, ensure_ascii=False))
    else:
        from attrs import evolve
        print(present(evolve(result, warnings=()) if warnings else result))


def _scope(args) -> dict:
    return {k: getattr(args, k) for k in SCOPE_FLAGS if getattr(args, k, None) is not None}


READERS = {
    "search": (lambda s, a: s.search(a.query, limit=a.limit, **_scope(a)), presenters.packet_text),
    "explain": (lambda s, a: s.explain(a.query, a.identity, limit=a.limit, **_scope(a)),
                presenters.explain_text),
    "get": (lambda s, a: s.get(a.identity, a.start_line, a.end_line), note_presenters.get_text),
    "neighbors": (lambda s, a: s.neighbors(a.identity, a.depth, **_scope(a)),
                  note_presenters.neighbors_text),
    "path": (lambda s, a: s.path(a.source, a.target, **_scope(a)), note_presenters.path_text),
    "health": (lambda s, a: s.health(), status_presenters.health_text),
    "feedback": (lambda s, a: s.feedback(a.query, a.memory_id, a.relevance, a.note),
                 status_presenters.feedback_text),
}


def _dispatch(args) -> int:
    cmd = args.command
    if cmd == "serve":
        capture_command.check_serve_flags(_settings(args))
    if cmd in capture_command.COMMANDS:
        result, present = capture_command.run_capture(args, _settings(args))
        _emit(args, result, present)
        return 0
    if cmd == "serve" and args.http is not None:
        from memory.entrypoints.http.server import run_serve_http
        return run_serve_http(args, _settings(args))
    if cmd == "serve":
        http_only = (args.auth is not None, args.issuer, args.audience, args.jwks,
                     args.public_url, args.allow_origin, args.max_concurrent, args.rate_limit,
                     args.max_sessions_per_token, args.max_connections, args.header_timeout,
                     args.body_timeout)
        if any(v is not None and v is not False and v != [] for v in http_only):
            raise InvalidRequest("--auth, --issuer, --audience, --jwks, --public-url, "
                                 "--allow-origin and the limits (--max-concurrent, --rate-limit, "
                                 "--max-sessions-per-token, --max-connections, --header-timeout, "
                                 "--body-timeout) belong to --http")
        from memory.entrypoints.mcp_server import serve
        return serve(_settings(args))
    if cmd == "token":
        from memory.entrypoints.token_command import run_token
        return run_token(args, _settings(args, must_exist=False))
    if cmd == "daemon":
        from memory.entrypoints.daemon import LocalDaemon, run_daemon
        settings = _settings(args)
        return run_daemon(args.action, LocalDaemon(settings.root, settings.state_dir))
    if cmd == "connect":
        from memory.entrypoints.bridge import run_connect
        return run_connect(_connect_settings(args), args.url, args.token_env)
    if cmd == "setup":
        from memory.entrypoints.setup_command import run_setup
        return run_setup(args)
    if cmd == "eval":
        from memory.entrypoints.eval_command import run_eval
        return run_eval(args, _settings(args))
    if cmd == "graph":
        return graph_command.run_graph(args, _settings(args))
    if cmd == "artifacts":
        return artifacts_command.run_artifacts(args, _settings(args))
    service = _service(args)
    if cmd == "refresh":
        from memory.entrypoints.cli_progress import TerminalProgress
        with TerminalProgress() as progress:
            report = service.refresh(args.mode, args.force, progress)
        _emit(args, report, status_presenters.refresh_text)
        return 0 if report.ok else 1
    if cmd in READERS:
        call, present = READERS[cmd]
        result = call(service, args)
        _emit(args, result, present)
        return 0 if cmd != "health" or result.healthy else 1
    raise InvalidRequest(f"unknown command {cmd}")


if __name__ == "__main__":
    raise SystemExit(main())
