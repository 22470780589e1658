"""The `ai-memory` command line: the eight operations plus serve, setup and eval."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from memory import __version__
from memory.domain.errors import AiMemoryError, InvalidRequest, NotFound, RefreshBusy
from memory.entrypoints import graph_command, presenters
from memory.entrypoints.settings import Settings

SCOPE_FLAGS = ("root_scope", "repository", "project", "ticket", "status", "path_prefix")


def _parser() -> argparse.ArgumentParser:
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

    p = argparse.ArgumentParser(prog="ai-memory", description=__doc__)
    p.add_argument("--version", action="version", version=f"ai-memory {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    s = sub.add_parser("serve", parents=[common], help="run the MCP stdio server")
    s.add_argument("--no-watch", action="store_true", help="do not watch the root for changes")
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
    s = sub.add_parser("feedback", parents=[common], help="record whether a result helped")
    s.add_argument("query")
    s.add_argument("memory_id")
    s.add_argument("relevance", choices=("relevant", "irrelevant", "missing"))
    s.add_argument("--note")
    s = sub.add_parser("setup", help="create a memory root, index it, register MCP clients")
    s.add_argument("--memory-root", default=None, help="default: ~/AI-Memory")
    s.add_argument("--install-clients", action="store_true")
    s.add_argument("--clients", help="comma-separated subset of clients to register "
                                     "(codex, claude-code, claude-desktop, copilot, opencode, vscode)")
    s.add_argument("--only-present", action="store_true",
                   help="register only clients whose configuration folder exists")
    s.add_argument("--dry-run", action="store_true")
    s.add_argument("--uninstall", action="store_true")
    s.add_argument("--skip-index", action="store_true", help="do not build the index")
    graph_command.add_arguments(sub.add_parser(
        "graph", parents=[common], help="write an interactive HTML page of the graph"))
    s = sub.add_parser("eval", parents=[common], help="score labelled queries (shared/eval format)")
    s.add_argument("queries")
    s.add_argument("--k", default="1,3,5,10")
    s.add_argument("--results", help="also write per-query results JSONL here")
    s.add_argument("--signals", default="lexical,semantic,graph",
                   help="comma-separated signals to use (ablations)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return _dispatch(args)
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
    except KeyboardInterrupt:
        return 130


def _settings(args, must_exist: bool = True) -> Settings:
    return Settings.resolve(args.root, args.state_dir, watch=not getattr(args, "no_watch", False),
                            must_exist=must_exist)


def _service(args):
    from memory.application.retrieval import SearchConfig
    from memory.entrypoints.container import build
    app = build(_settings(args))
    # A one-shot command has nothing better to do than wait for the model to load.
    app.use_cases.search_config.override(SearchConfig(semantic_wait_s=120.0))
    return app.use_cases.service()


def _emit(args, data: dict, text: str) -> None:
    print(json.dumps(data, indent=2, ensure_ascii=False) if args.json else text)


def _scope(args) -> dict:
    return {k: getattr(args, k) for k in SCOPE_FLAGS if getattr(args, k, None) is not None}


def _dispatch(args) -> int:
    cmd = args.command
    if cmd == "serve":
        from memory.entrypoints.mcp_server import serve
        return serve(_settings(args))
    if cmd == "setup":
        from memory.entrypoints.setup_command import run_setup
        return run_setup(args)
    if cmd == "eval":
        from memory.entrypoints.eval_command import run_eval
        return run_eval(args, _settings(args))
    if cmd == "graph":
        return graph_command.run_graph(args, _settings(args))
    service = _service(args)
    if cmd == "search":
        packet = service.search(args.query, limit=args.limit, **_scope(args))
        _emit(args, packet.as_dict(), presenters.packet_text(packet))
        return 0
    if cmd == "explain":
        result = service.explain(args.query, args.identity, limit=args.limit, **_scope(args))
        _emit(args, result, json.dumps(result, indent=2, ensure_ascii=False))
        return 0
    if cmd == "get":
        doc = service.get(args.identity, args.start_line, args.end_line)
        _emit(args, doc, presenters.get_text(doc))
        return 0
    if cmd == "neighbors":
        result = service.neighbors(args.identity, args.depth)
        _emit(args, result, presenters.neighbors_text(result))
        return 0
    if cmd == "path":
        result = service.path(args.source, args.target)
        _emit(args, result, presenters.path_text(result))
        return 0
    if cmd == "refresh":
        with _progress() as progress:
            report = service.refresh(args.mode, args.force, progress)
        _emit(args, report.as_dict(), presenters.refresh_text(report))
        return 0 if report.ok else 1
    if cmd == "health":
        health = service.health()
        _emit(args, health, presenters.health_text(health))
        return 0 if health["healthy"] else 1
    if cmd == "feedback":
        record = service.feedback(args.query, args.memory_id, args.relevance, args.note)
        _emit(args, record, f"recorded: {record['relevance']} {record['path']}")
        return 0
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
