"""README, docs/ and the skill name only the tools, resources and prompts the server declares,
and any count of tools they state is the server's count; recorded output in fences is exempt."""

from __future__ import annotations

import re
from pathlib import Path

import anyio
from mcp import Client

from memory.entrypoints.mcp_server import build_server, tool_names

REPO = Path(__file__).resolve().parents[2]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")),
        *sorted((REPO / "src/memory/skills").rglob("*.md"))]
NUMBERS = {w: n for n, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve".split())}
COUNT = re.compile(r"\b(?:the|all|our|its)\s+(\w+)\s+(read\s+|write\s+|MCP\s+)?tools\b",
                   re.IGNORECASE)
TOOL = re.compile(r"`(memory_[a-z_]+)`")


def prose(path: Path) -> str:
    """The file without its fenced blocks (recorded runs, commands)."""
    return re.sub(r"^```.*?^```", "", path.read_text(encoding="utf-8"), flags=re.S | re.M)


def declared() -> tuple[set[str], set[str], set[str]]:
    async def listing():
        async with Client(build_server(lambda: None, capture=lambda: None,
                                       browser=lambda: None)) as client:
            return ({t.name for t in (await client.list_tools()).tools},
                    {p.name for p in (await client.list_prompts()).prompts},
                    {t.name for t in (await client.list_resource_templates()).resource_templates})
    return anyio.run(listing)


def test_the_server_declares_the_code_s_tool_list():
    tools, prompts, templates = declared()
    assert tools == set(tool_names())
    assert prompts and templates


def test_every_tool_count_in_the_docs_is_the_server_s():
    counts = {"": len(tool_names()), "read": len(tool_names(writes=False)),
              "write": len(tool_names()) - len(tool_names(writes=False)), "mcp": len(tool_names())}
    wrong = []
    for path in DOCS:
        for match in COUNT.finditer(prose(path)):
            word, kind = match.group(1).lower(), (match.group(2) or "").strip().lower()
            number = NUMBERS.get(word, int(word) if word.isdigit() else None)
            if number is not None and number != counts[kind]:
                wrong.append(f"{path.relative_to(REPO)}: {match.group(0)!r} (the server: {counts[kind]})")
    assert not wrong, wrong


def test_every_tool_the_docs_name_in_code_is_declared():
    known = set(tool_names())
    named = {(path.relative_to(REPO), name) for path in DOCS
             for name in TOOL.findall(prose(path)) if name.startswith("memory_")}
    unknown = sorted(f"{path}: {name}" for path, name in named
                     if name not in known and name not in NOT_TOOLS)
    assert not unknown, unknown


# Names of the memory_ family that are fields or settings, not tools.
NOT_TOOLS = {"memory_id", "memory_ids", "memory_root"}


def test_every_list_of_cross_cutting_folders_is_the_code_s():
    """README, the skill, the note schema and the welcome note name all of them or none."""
    from memory.domain.note_scope import CROSS_CUTTING_FOLDERS
    from memory.entrypoints.setup_command import welcome_note
    texts = {str(path.relative_to(REPO)): path.read_text(encoding="utf-8") for path in DOCS}
    texts["welcome note"] = welcome_note()
    short = []
    for name, text in texts.items():
        for paragraph in re.split(r"\n\s*\n", text):
            listed = [f for f in CROSS_CUTTING_FOLDERS if f"`{f}`" in paragraph]
            if len(listed) >= 3 and len(listed) < len(CROSS_CUTTING_FOLDERS):
                short.append(f"{name}: {paragraph.strip()[:80]!r} lists {listed}")
    assert not short, short


def test_the_readme_names_every_prompt_and_resource_template_the_server_declares():
    async def listing():
        async with Client(build_server(lambda: None, browser=lambda: None)) as client:
            return ({p.name for p in (await client.list_prompts()).prompts},
                    {t.uri_template for t in (await client.list_resource_templates())
                     .resource_templates})
    prompts, templates = anyio.run(listing)
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert prompts and all(f"`{name}`" in readme for name in prompts), prompts
    assert templates and all(f"`{t}`" in readme for t in templates), templates
    written = {t for path in DOCS for t in re.findall(r"`(memory://[a-z]+/\{[^`]*\})`", prose(path))}
    assert written <= templates, written - templates
