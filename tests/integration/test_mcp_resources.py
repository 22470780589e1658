"""Notes as resources and the two prompts, through `ai-memory serve` and the SDK's client."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError
from mcp_types import PaginatedRequestParams

from memory.application.browse.notes import MAX_TEXT_CHARS, PAGE_SIZE

OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
FILLER = PAGE_SIZE + 20  # more notes than one page holds
ODD_NAMES = ["Repos/api/Notes/Retry Policy.md", "Café/été – naïve 日本.md",
             "Odd/100%25 done #1?.md", "Odd/a+b=c & d.md"]
SECRET_NOTE = """\
---
memory_id: deploy-notes
title: Deploy notes
repository: api
---
# Deploy notes

The deploy user is ci-bot.
password: correct-horse-battery-staple-9
"""


@pytest.fixture(scope="module")
def anyio_backend():
    return "asyncio"


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("resources") / "memory"
    for i in range(FILLER):
        write(base, f"Filler/note {i:03d}.md", f"# Filler {i}\n\nNothing much, number {i}.\n")
    for name in ODD_NAMES:
        write(base, name, f"# {Path(name).stem}\n\nA note with an unusual file name.\n")
    write(base, "Ops/Deploy.md", SECRET_NOTE)
    write(base, "Big/Long.md", "# Long\n\n" + "\n".join(
        f"{i:05d} " + "z" * 994 for i in range(300)) + "\n")  # ~300 KB
    done = subprocess.run(
        [sys.executable, "-m", "memory", "refresh", "--root", str(base)],
        capture_output=True, text=True, timeout=900, env={**os.environ, **OFFLINE})
    assert done.returncode == 0, done.stderr[-3000:]
    write(base, "Later/saved since.md", "# Written after the refresh\n")
    (base.parent / "outside.md").write_text("# Outside the root\n", encoding="utf-8")
    return base


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture(scope="module")
async def served(root):
    """(client session, initialize result) of one server for the module."""
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "memory", "serve", "--root", str(root), "--no-watch"],
        env={**os.environ, **OFFLINE})
    with open(root.parent / "serve.stderr", "w") as err:
        async with stdio_client(params, errlog=err) as (read, write_stream):
            async with ClientSession(read, write_stream) as client:
                with anyio.fail_after(60):
                    initialized = await client.initialize()
                yield client, initialized


@pytest.fixture
def session(served):
    return served[0]


async def every_page(session):
    listed, cursors = [], []
    cursor = None
    while True:
        with anyio.fail_after(120):
            page = await session.list_resources(params=PaginatedRequestParams(cursor=cursor))
        listed += page.resources
        cursor = page.next_cursor
        if cursor is None:
            return listed, cursors
        cursors.append(cursor)


async def read_text(session, uri: str) -> str:
    with anyio.fail_after(60):
        result = await session.read_resource(uri)
    [content] = result.contents
    assert content.mime_type == "text/markdown"
    return content.text


@pytest.mark.anyio
async def test_the_server_declares_resources_and_prompts(served):
    capabilities = served[1].capabilities
    assert capabilities.resources is not None and capabilities.prompts is not None


@pytest.mark.anyio
async def test_listing_pages_through_every_indexed_note_once(session, root):
    listed, cursors = await every_page(session)
    names = [r.name for r in listed]
    assert len(cursors) == 1 and len(names) == len(set(names))
    expected = sorted([f"Filler/note {i:03d}.md" for i in range(FILLER)]
                      + ODD_NAMES + ["Ops/Deploy.md", "Big/Long.md", "Later/saved since.md"])
    # The note written after the refresh is offered: a listing first catches up, as a
    # search does.
    assert names == expected
    deploy = next(r for r in listed if r.name == "Ops/Deploy.md")
    assert deploy.uri == "memory://note/Ops/Deploy.md" and deploy.mime_type == "text/markdown"
    assert deploy.title == "Deploy notes" and "memory_id deploy-notes" in deploy.description


@pytest.mark.anyio
async def test_templates_name_notes_by_path_and_by_memory_id(session):
    with anyio.fail_after(60):
        templates = (await session.list_resource_templates()).resource_templates
    assert {t.uri_template for t in templates} == {"memory://note/{+path}",
                                                   "memory://id/{+memory_id}"}
    assert all(t.mime_type == "text/markdown" for t in templates)


@pytest.mark.anyio
async def test_every_listed_uri_reads_back_its_own_file(session, root):
    listed, _ = await every_page(session)
    by_name = {r.name: r.uri for r in listed}
    for name in ODD_NAMES:
        assert by_name[name] == "memory://note/" + quote(name, safe="/")
        text = await read_text(session, by_name[name])
        assert text == (root / name).read_text(encoding="utf-8").rstrip("\n")


@pytest.mark.anyio
async def test_read_keeps_front_matter_and_redacts_the_secret(session):
    by_path = await read_text(session, "memory://note/Ops/Deploy.md")
    assert by_path.startswith("---\nmemory_id: deploy-notes\ntitle: Deploy notes\n")
    assert "correct-horse" not in by_path and "[REDACTED:" in by_path
    assert "The deploy user is ci-bot." in by_path
    assert await read_text(session, "memory://id/deploy-notes") == by_path


@pytest.mark.anyio
async def test_memory_ids_with_slashes_read_escaped_or_not(session):
    memory_id = "repos/api/notes/retry policy"  # the default id: the path, lower case
    escaped = await read_text(session, "memory://id/" + quote(memory_id, safe=""))
    assert escaped.startswith("# Retry Policy")
    assert await read_text(session, "memory://id/" + quote(memory_id, safe="/")) == escaped


@pytest.mark.anyio
async def test_a_long_note_is_cut_and_says_so(session, root):
    text = await read_text(session, "memory://note/Big/Long.md")
    body, notice = text.split("\n\n[ai-memory: ")
    whole = (root / "Big/Long.md").read_text(encoding="utf-8")
    assert MAX_TEXT_CHARS - 1000 < len(body) <= MAX_TEXT_CHARS and whole.startswith(body + "\n")
    assert len(notice) < 400
    assert "cut here" in notice and "memory_get(identity='Big/Long.md', start_line=" in notice


@pytest.mark.anyio
@pytest.mark.parametrize("uri, says", [
    ("memory://note/Later/never%20written.md", "no indexed note"),
    ("memory://note/../outside.md", "inside the memory root"),
    ("memory://note/%2E%2E/outside.md", "inside the memory root"),
    ("memory://note/.git/config.md", "hidden"),
    ("memory://id/no-such-note", "no indexed note has memory_id"),
    ("memory://note/Filler/note%20000.md?x=1", "Unknown resource"),
    ("file:///etc/passwd", "Unknown resource"),
])
async def test_reading_what_is_not_an_indexed_note_is_an_mcp_error(session, uri, says):
    with anyio.fail_after(60), pytest.raises(MCPError) as caught:
        await session.read_resource(uri)
    assert caught.value.error.code == -32602
    assert says in caught.value.error.message and "Traceback" not in caught.value.error.message
    assert (await session.list_resources()).resources  # the server is still up


@pytest.mark.anyio
async def test_a_cursor_not_given_out_is_an_invalid_params_error(session):
    with anyio.fail_after(60), pytest.raises(MCPError) as caught:
        await session.list_resources(
            params=PaginatedRequestParams(cursor="%%% not a cursor %%%"))
    assert caught.value.error.code == -32602 and "cursor" in caught.value.error.message


@pytest.mark.anyio
async def test_prompts_recall_and_save_take_their_arguments(session):
    with anyio.fail_after(60):
        prompts = {p.name: p for p in (await session.list_prompts()).prompts}
        recall = await session.get_prompt("recall", {"task": "fix the webhook retries",
                                                     "repository": "payments-api",
                                                     "ticket": "PAY-142"})
        save = await session.get_prompt("save", {"learned": "retries need an idempotency key"})
    assert set(prompts) == {"recall", "save"}
    required = {a.name: a.required for a in prompts["recall"].arguments}
    assert required == {"task": True, "repository": False, "project": False, "ticket": False}
    text = recall.messages[0].content.text
    assert recall.messages[0].role == "user"
    assert "fix the webhook retries" in text and "memory_search" in text
    assert 'repository="payments-api"' in text and 'ticket="PAY-142"' in text
    assert "path:Lstart-Lend" in text
    saved = save.messages[0].content.text
    assert "retries need an idempotency key" in saved
    assert "memory_write" in saved and "memory_edit" in saved and "secrets" in saved


@pytest.mark.anyio
@pytest.mark.parametrize("name, arguments, says", [
    ("recall", {}, "task"), ("recall", {"task": "x" * 5000}, "task"),
    ("recall", {"task": "a", "colour": "red"}, "colour"), ("forget", {}, "forget"),
])
async def test_bad_prompt_arguments_are_invalid_params(session, name, arguments, says):
    with anyio.fail_after(60), pytest.raises(MCPError) as caught:
        await session.get_prompt(name, arguments)
    assert caught.value.error.code == -32602 and says in caught.value.error.message
