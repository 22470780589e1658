"""docs/architecture.md's table of what the server declares is exactly what a client lists:
every tool (read or write), resource template and prompt, none missing, none extra."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import anyio
from mcp import Client

from memory.entrypoints.mcp_server import build_server, tool_names

DOC = Path(__file__).resolve().parents[2] / "docs" / "architecture.md"
SECTION = "## What the server declares"
ROW = re.compile(r"^\|\s*(?P<kind>[a-z ]+?)\s*\|\s*`(?P<name>[^`]+)`\s*\|", re.M)
KINDS = ("read tool", "write tool", "resource template", "prompt")


def documented(text: str) -> list[tuple[str, str]]:
    """(kind, name) of each row of the section's table, in order."""
    assert SECTION in text, f"docs/architecture.md has no {SECTION!r} section"
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))
    return [(m["kind"], m["name"]) for m in ROW.finditer(text[start:end if end > 0 else None])]


def declared() -> dict[str, set[str]]:
    """What a client of a full server (write tools and note resources on) lists, by kind."""
    async def listing():
        async with Client(build_server(lambda: None, capture=lambda: None,
                                       browser=lambda: None)) as client:
            return ({t.name for t in (await client.list_tools()).tools},
                    {t.uri_template for t in (await client.list_resource_templates())
                     .resource_templates},
                    {p.name for p in (await client.list_prompts()).prompts})
    tools, templates, prompts = anyio.run(listing)
    read = set(tool_names(writes=False))
    return {"read tool": tools & read, "write tool": tools - read,
            "resource template": templates, "prompt": prompts}


def differences(rows: list[tuple[str, str]], server: dict[str, set[str]]) -> list[str]:
    """What the doc's rows get wrong about the server: unknown kinds, rows written twice,
    what it lacks and what it names that the server does not declare."""
    wrong = [f"unknown kind {kind!r} ({name})" for kind, name in rows if kind not in KINDS]
    wrong += [f"twice: {kind} {name}" for (kind, name), n in Counter(rows).items() if n > 1]
    for kind in KINDS:
        written = {name for k, name in rows if k == kind}
        wrong += [f"missing {kind} {name}" for name in sorted(server[kind] - written)]
        wrong += [f"not declared: {kind} {name}" for name in sorted(written - server[kind])]
    return wrong


def test_the_doc_lists_exactly_what_the_server_declares():
    server = declared()
    assert all(server.values()), server  # a server listing nothing would match an empty doc
    assert differences(documented(DOC.read_text(encoding="utf-8")), server) == []


def test_a_read_only_server_declares_the_doc_s_read_tools_alone():
    async def listing():
        async with Client(build_server(lambda: None, browser=lambda: None)) as client:
            return {t.name for t in (await client.list_tools()).tools}
    rows = documented(DOC.read_text(encoding="utf-8"))
    assert anyio.run(listing) == {name for kind, name in rows if kind == "read tool"}


def test_a_row_dropped_added_or_misfiled_is_found():
    text, server = DOC.read_text(encoding="utf-8"), declared()
    dropped = re.sub(r"^\| read tool \| `memory_get` \|.*\n", "", text, flags=re.M)
    added = text.replace("| prompt | `save` |", "| prompt | `forget` | x |\n| prompt | `save` |")
    misfiled = text.replace("| write tool | `memory_edit` |", "| read tool | `memory_edit` |")
    assert differences(documented(dropped), server) == ["missing read tool memory_get"]
    assert differences(documented(added), server) == ["not declared: prompt forget"]
    assert differences(documented(misfiled), server) == [
        "not declared: read tool memory_edit", "missing write tool memory_edit"]
