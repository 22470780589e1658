"""Run as a script (tests/integration/test_packaging.py): ai-memory in a process where psycopg
cannot be imported, as on an install without the postgres extra. Prints one JSON line per
command (three on the command line, one tool call through the MCP server), then the psycopg
modules that were loaded."""

from __future__ import annotations

import contextlib
import io
import json
import sys


class NoPsycopg:
    """A meta-path finder that refuses psycopg and its pool, as if they were not installed."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        if name.split(".")[0] in ("psycopg", "psycopg_pool", "psycopg_binary"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


def cli(*args: str) -> dict:
    from memory.entrypoints.cli import main
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main([*args, "--json"])
    return {"args": list(args), "code": code, "out": json.loads(out.getvalue())}


async def tool_search(root: str, store: str) -> dict:
    """memory_search through the MCP server as `serve --store` builds it, in process."""
    from mcp import Client

    from memory.entrypoints.mcp_server import LazyApplication, build_server
    from memory.entrypoints.settings import Settings
    app = LazyApplication(Settings.resolve(root, store=store))
    async with Client(build_server(app.service)) as client:
        result = await client.call_tool("memory_search", {"query": "retry budget"})
    return {"is_error": result.is_error, "text": " ".join(c.text for c in result.content)}


def run(root: str) -> None:
    import anyio
    sys.meta_path.insert(0, NoPsycopg())
    store = "postgresql://localhost/aim"
    for args in (("refresh", "--mode", "index", "--root", root),
                 ("search", "retry budget", "--root", root),
                 ("search", "retry budget", "--root", root, "--store", store)):
        print(json.dumps(cli(*args)))
    print(json.dumps(anyio.run(tool_search, root, store)))
    print(json.dumps({"loaded": sorted(m for m in sys.modules if m.startswith("psycopg"))}))


if __name__ == "__main__":
    run(sys.argv[1])
