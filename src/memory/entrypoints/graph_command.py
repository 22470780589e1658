"""`ai-memory graph --html FILE`: an interactive page of the graph, cut down to a scope."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from memory.domain.errors import InvalidRequest
from memory.entrypoints.settings import Settings

KEYS = ("root_scope", "repository", "project", "ticket", "path_prefix")
MAX_NODES = 2000  # the layout takes seconds from about here on, and the page gets crowded


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--html", required=True, metavar="FILE",
                        help="write the page here (replaced if it exists)")
    parser.add_argument("--root-scope", dest="root_scope",
                        help="only notes of this root scope: work or personal")
    parser.add_argument("--repository", "--repo", dest="repository",
                        help="only notes about this repository (and cross-cutting notes)")
    parser.add_argument("--project", help="only notes about this project (and cross-cutting ones)")
    parser.add_argument("--ticket", help="only notes of this ticket, e.g. ALPHA-142")
    parser.add_argument("--path-prefix", dest="path_prefix",
                        help="only notes under this folder of the root, e.g. Repos/api/")
    parser.add_argument("--status", default="any",
                        help="any (default), active, needs-review, superseded or archived")
    parser.add_argument("--max-nodes", type=int, default=MAX_NODES,
                        help=f"refuse a picture of more nodes than this (default {MAX_NODES})")


def run_graph(args: argparse.Namespace, settings: Settings) -> int:
    from memory.entrypoints.container import build
    from memory.entrypoints.graph_page import write_page  # plotly: only for this command

    filters = {k: getattr(args, k) for k in KEYS if getattr(args, k, None)}
    picture = build(settings).use_cases.picture().draw(status=args.status, **filters)
    if len(picture.nodes) > args.max_nodes:
        raise InvalidRequest(f"the picture would hold {len(picture.nodes)} nodes, more than "
                             f"--max-nodes {args.max_nodes}: narrow it with --repository, "
                             "--project, --ticket or --path-prefix, or raise --max-nodes")
    target = Path(args.html).expanduser()
    scope = ", ".join(f"{k} {v}" for k, v in filters.items()) or "every note"
    if args.status != "any":
        scope += f", status {args.status}"
    try:
        write_page(picture, target, title=f"ai-memory: {settings.root}", scope=scope)
        for warning in picture.warnings:  # the page says them too
            print(f"warning: {warning}", file=sys.stderr)
    except OSError as e:
        raise InvalidRequest(f"cannot write {target}: {e.strerror or e}") from e
    summary = {"html": str(target.resolve()), "graph_generation": picture.generation,
               "notes": len(picture.notes), "nodes": len(picture.nodes),
               "edges": len(picture.edges), "scope": scope, "warnings": list(picture.warnings)}
    print(json.dumps(summary, indent=2) if args.json else
          f"wrote {summary['html']}: {summary['notes']} notes, {summary['nodes']} nodes, "
          f"{summary['edges']} edges (graph generation {picture.generation}, {scope})")
    return 0
