"""The `ai-memory` command line: the eight operations plus serve, setup, eval and the shared
server (token, daemon, connect)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from contextlib import suppress

from memory import __version__
from memory.domain.errors import AiMemoryError, InvalidRequest, NotFound, RefreshBusy
from memory.entrypoints import (capture_command, graph_command, note_presenters, presenters,
                                status_presenters)
from memory.entrypoints.settings import Settings

SCOPE_FLAGS = ("root_scope", "repository", "project", "ticket", "status", "path_prefix")


def _shared_options() -> tuple[argparse.ArgumentParser, argparse.ArgumentParser]:
    """Options every command takes, and the scope options of search and explain."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--root", help="memory root folder (default: $AI_MEMORY_ROOT)")
    common.add_argument("--state-dir", help="derived state folder (default: ROOT/.ai-memory)")
    common.add_argument("--json", action="store_true", help="print the structured result as JSON")

    scoped = argparse.ArgumentParser(add_help=False)
    scoped.add_argument("--root-scope", dest="root_scope", help="work or personal")
    scoped.add_argument("--repository", "--repo", dest="repository")
    scoped.add_argument("--project")
    scoped.add_argument("--ticket")
    scoped.add_argument("--status", default="active",
                        help="active (default), needs-review, superseded, archived or any")
    scoped.add_argument("--path-prefix", dest="path_prefix")
    scoped.add_argument("--limit", type=int, default=8)
    return common, scoped


def _operation_commands(sub, common, scoped) -> None:
    """serve, then the operations from search to health (feedback and setup follow)."""
    s = sub.add_parser("serve", parents=[common], help="run the MCP stdio server")
    s.add_argument("--no-watch", action="store_true", help="do not watch the root for changes")
    capture_command.add_serve_flags(s)
    _http_flags(s)
    s = sub.add_parser("search", parents=[common, scoped], help="search memory, cite evidence")
    s.add_argument("query")
    s = sub.add_parser("explain", parents=[common, scoped], help="why a search ranks as it does")
    s.add_argument("query")
    s.add_argument("--identity", help="a note to explain the presence or absence of")
    s = sub.add_parser("get", parents=[common], help="read a note by memory_id, path or title")
    s.add_argument("identity")
    s.add_argument("--start-line", type=int)
    s.add_argument("--end-line", type=int)
    s = sub.add_parser("neighbors", parents=[common], help="notes related to a note in the graph")
    s.add_argument("identity")
    s.add_argument("--depth", type=int, default=1)
    s = sub.add_parser("path", parents=[common], help="relationship path between two notes")
    s.add_argument("source")
    s.add_argument("target")
    s = sub.add_parser("refresh", parents=[common], help="rebuild the index (and graph)")
    s.add_argument("--mode", default="index", choices=("index", "full"))
    s.add_argument("--force", action="store_true", help="publish even if nothing changed")
    sub.add_parser("health", parents=[common], help="state of index, graph and model")


def _parser() -> argparse.ArgumentParser:
    common, scoped = _shared_options()
    p = argparse.ArgumentParser(prog="ai-memory", description=__doc__)
    p.add_argument("--version", action="version", version=f"ai-memory {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _operation_commands(sub, common, scoped)
    s = sub.add_parser("feedback", parents=[common], help="record whether a result helped")
    s.add_argument("query")
    s.add_argument("memory_id")
    s.add_argument("relevance", choices=("relevant", "irrelevant", "missing"))
    s.add_argument("--note")
    s = sub.add_parser("setup", help="create a memory root, index it, register MCP clients")
    s.add_argument("--root", "--memory-root", dest="root",
                   help="memory root folder (default: $AI_MEMORY_ROOT, else ~/AI-Memory)")
    s.add_argument("--install-clients", action="store_true",
                   help="register the server with every client whose configuration folder "
                        "exists (or those named in --clients)")
    s.add_argument("--clients", metavar="NAMES",
                   help="comma-separated clients to register even if not found, or 'all': "
                        "codex, claude-code, claude-desktop, copilot, opencode, vscode")
    s.add_argument("--only-present", action="store_true", help=argparse.SUPPRESS)  # the default
    s.add_argument("--name", help="register this root as ai-memory-NAME, beside other roots "
                                  "(default: the entry is ai-memory); --uninstall removes it")
    s.add_argument("--dry-run", action="store_true",
                   help="print what would change, with diffs, and write nothing")
    s.add_argument("--uninstall", action="store_true",
                   help="remove our entry (and the skill, once no entry is left)")
    s.add_argument("--skip-index", action="store_true", help="do not build the index")
    _shared_server_commands(sub, common)
    capture_command.add_commands(sub, [common])
    graph_command.add_arguments(sub.add_parser(
        "graph", parents=[common], help="write an interactive HTML page of the graph"))
    s = sub.add_parser("eval", parents=[common], help="score labelled queries (shared/eval format)")
    s.add_argument("queries")
    s.add_argument("--k", default="1,3,5,10")
    s.add_argument("--results", help="also write per-query results JSONL here")
    s.add_argument("--signals", default="lexical,semantic,graph",
                   help="comma-separated signals to use (ablations)")
    return p


def _http_flags(s: argparse.ArgumentParser) -> None:
    h = s.add_argument_group("Streamable HTTP (one server for many clients)")
    h.add_argument("--http", nargs="?", const="", metavar="[HOST:]PORT",
                   help="serve over HTTP at /mcp instead of stdio (default 127.0.0.1:8765)")
    h.add_argument("--auth", choices=("none", "tokens", "oauth"), default="none",
                   help="required to bind a non-loopback address")
    h.add_argument("--issuer", help="--auth oauth: the issuer whose JWTs are accepted")
    h.add_argument("--audience", help="--auth oauth: the audience tokens must be issued for")
    h.add_argument("--jwks", metavar="URL|FILE", help="--auth oauth: the issuer's signing keys")
    h.add_argument("--public-url", help="the URL clients use (behind a TLS proxy); its Host and "
                                        "Origin are admitted, and it names the resource")
    h.add_argument("--allow-origin", action="append", default=[], metavar="ORIGIN",
                   help="a browser origin to admit (none is by default)")
    h.add_argument("--max-concurrent", type=int, help="requests in flight per token (default 8)")
    h.add_argument("--daemon-record", action="store_true", help=argparse.SUPPRESS)


def _shared_server_commands(sub, common: argparse.ArgumentParser) -> None:
    s = sub.add_parser("token", help="API tokens for serve --http --auth tokens")
    tokens = s.add_subparsers(dest="token_command", required=True, metavar="ACTION")
    t = tokens.add_parser("create", parents=[common], help="make a token; it is printed once")
    t.add_argument("--name", required=True)
    t.add_argument("--scope", choices=("read", "write"), default="read")
    tokens.add_parser("list", parents=[common], help="tokens by name and scope (never secrets)")
    t = tokens.add_parser("revoke", parents=[common], help="revoke a token by name")
    t.add_argument("name")
    s = sub.add_parser("daemon", parents=[common], help="the root's shared local HTTP server")
    s.add_argument("action", choices=("start", "stop", "status"))
    s = sub.add_parser("connect", parents=[common],
                       help="stdio bridge to the root's shared server (started if needed)")
    s.add_argument("--url", help="bridge to this server instead (e.g. a team server)")
    s.add_argument("--token-env", metavar="VAR", help="send the bearer token in $VAR")


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        code = _dispatch(args)
        sys.stdout.flush()  # a reader gone away shows here, not at the interpreter's exit
        return code
    except BrokenPipeError:
        # `ai-memory search ... | head`: the reader has what it wanted. Point stdout at the
        # null device so that the interpreter's last flush does not fail again.
        with suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # what a shell reports for a command ended by SIGPIPE
    except InvalidRequest as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except NotFound as exc:
        print(f"not found: {exc}", file=sys.stderr)
        return 3
    except RefreshBusy as exc:
        print(f"busy: {exc}", file=sys.stderr)
        return 4
    except AiMemoryError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:  # a file ai-memory needed could not be read or written
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


def _settings(args, must_exist: bool = True) -> Settings:
    return Settings.resolve(args.root, args.state_dir, watch=not getattr(args, "no_watch", False),
                            must_exist=must_exist, read_only=getattr(args, "read_only", False),
                            git_commit=getattr(args, "git_commit", False))


def _service(args):
    from memory.application.search_config import GatherConfig, SearchConfig
    from memory.entrypoints.container import build
    app = build(_settings(args))
    # A one-shot command has nothing better to do than wait for the model to load.
    app.use_cases.search_config.override(SearchConfig(gather=GatherConfig(semantic_wait_s=120.0)))
    return app.use_cases.service()


def _emit(args, result, text: str) -> None:
    if args.json:
        from memory.entrypoints.converter import to_json
        print(json.dumps(to_json(result), indent=2, ensure_ascii=False))
    else:
        print(text)


def _scope(args) -> dict:
    return {k: getattr(args, k) for k in SCOPE_FLAGS if getattr(args, k, None) is not None}


READERS = {
    "search": (lambda s, a: s.search(a.query, limit=a.limit, **_scope(a)), presenters.packet_text),
    "explain": (lambda s, a: s.explain(a.query, a.identity, limit=a.limit, **_scope(a)),
                presenters.explain_text),
    "get": (lambda s, a: s.get(a.identity, a.start_line, a.end_line), note_presenters.get_text),
    "neighbors": (lambda s, a: s.neighbors(a.identity, a.depth), note_presenters.neighbors_text),
    "path": (lambda s, a: s.path(a.source, a.target), note_presenters.path_text),
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
        _emit(args, result, present(result))
        return 0
    if cmd == "serve" and args.http is not None:
        from memory.entrypoints.http.server import run_serve_http
        return run_serve_http(args, _settings(args))
    if cmd == "serve":
        http_only = (args.auth != "none", args.issuer, args.audience, args.jwks,
                     args.public_url, args.allow_origin, args.max_concurrent)
        if any(http_only):
            raise InvalidRequest("--auth, --issuer, --audience, --jwks, --public-url, "
                                 "--allow-origin and --max-concurrent belong to --http")
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
        return run_connect(None if args.url else _settings(args), args.url, args.token_env)
    if cmd == "setup":
        from memory.entrypoints.setup_command import run_setup
        return run_setup(args)
    if cmd == "eval":
        from memory.entrypoints.eval_command import run_eval
        return run_eval(args, _settings(args))
    if cmd == "graph":
        return graph_command.run_graph(args, _settings(args))
    service = _service(args)
    if cmd == "refresh":
        with _progress() as progress:
            report = service.refresh(args.mode, args.force, progress)
        _emit(args, report, status_presenters.refresh_text(report))
        return 0 if report.ok else 1
    if cmd in READERS:
        call, present = READERS[cmd]
        result = call(service, args)
        _emit(args, result, present(result))
        return 0 if cmd != "health" or result.healthy else 1
    raise InvalidRequest(f"unknown command {cmd}")


class _progress:
    """A tqdm bar on a terminal, plain stderr lines otherwise; never on stdout."""

    def __enter__(self):
        self._bars: dict = {}
        self._tty = sys.stderr.isatty()
        self._last: dict = {}
        return self.update

    def update(self, stage: str, done: int, total: int) -> None:
        if self._tty:
            from tqdm import tqdm
            bar = self._bars.get(stage)
            if bar is None:
                bar = self._bars[stage] = tqdm(total=total, desc=stage, unit="note", file=sys.stderr)
            bar.total = total
            bar.update(done - bar.n)
            return
        step = max(1, total // 10)
        if done == total or done - self._last.get(stage, 0) >= step:
            self._last[stage] = done
            print(f"{stage}: {done}/{total}", file=sys.stderr)

    def __exit__(self, *exc):
        for bar in self._bars.values():
            bar.close()
        return False


if __name__ == "__main__":
    raise SystemExit(main())
