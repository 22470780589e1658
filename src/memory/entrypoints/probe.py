"""Prove a memory root is served: spawn `ai-memory serve`, list tools, run one search.

Used by scripts/setup.sh and `ai-memory setup`; talks to the server exactly as an MCP
client does (the SDK's stdio client).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import anyio

from memory.entrypoints.mcp_server import tool_names


async def probe(root: str, query: str, command: str | None = None) -> int:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    exe = command or sys.executable
    args = ["serve", "--root", root] if command else ["-m", "memory", "serve", "--root", root]
    params = StdioServerParameters(command=exe, args=args)
    started = time.perf_counter()
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = await session.list_tools()
            listed = time.perf_counter() - started
            names = sorted(t.name for t in tools.tools)
            print(f"server answered tools/list in {listed:.2f}s: {', '.join(names)}", file=sys.stderr)
            result = await session.call_tool("memory_search", {"query": query, "status": "any"})
            text = "\n".join(getattr(c, "text", "") for c in result.content)
            print(f"memory_search({query!r}):\n{text}", file=sys.stderr)
            mismatch = tool_mismatch(names, tool_names())
            if mismatch:
                print(f"error: {mismatch}", file=sys.stderr)
            if result.is_error:
                print("error: memory_search answered with an error", file=sys.stderr)
            return 1 if result.is_error or mismatch else 0


def tool_mismatch(declared: list[str], expected: tuple[str, ...]) -> str:
    """What differs between the tools the server declared and those the code defines ('' if none)."""
    missing = sorted(set(expected) - set(declared))
    extra = sorted(set(declared) - set(expected))
    parts = ([f"not declared: {', '.join(missing)}"] if missing else []) + (
        [f"declared but unknown: {', '.join(extra)}"] if extra else [])
    return "the server's tools differ from the code's list (" + "; ".join(parts) + ")" if parts else ""


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--root", required=True)
    p.add_argument("--query", default="how do agents use ai-memory")
    p.add_argument("--command", help="ai-memory executable (default: this Python -m memory)")
    args = p.parse_args(argv)
    return anyio.run(probe, str(Path(args.root).expanduser().resolve()), args.query, args.command)


if __name__ == "__main__":
    raise SystemExit(main())
