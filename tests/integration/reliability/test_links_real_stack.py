"""Only notes are notes: a `*.md` link that points into `.git`, the state folder or a hidden
folder is never indexed, searched, read, listed as a resource or put in the graph, wherever
the link sits (such a link can arrive with a `git pull` of a shared notes repository).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
MARKERS = {"gitconfigmarker", "statefoldermarker", "hiddenfoldermarker", "hiddenfilemarker",
           "dotstatemarker"}
LINKS = {  # link path -> where it points (relative to the root)
    "config.md": ".git/config",
    "Notes/deep/state.md": "state/planted.md",
    "Notes/state-history.md": "state/refresh-history.jsonl",
    "hidden.md": ".hidden/secret.md",
    "Notes/env.md": "Notes/.env.md",
    "dotstate.md": ".ai-memory/planted.md",
    "Notes/via-dir.md": "Notes/hidden-dir/secret.md",  # Notes/hidden-dir -> ../.hidden
}


@pytest.fixture(scope="module")
def anyio_backend():
    return "asyncio"


def put(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def link(root: Path, rel: str, target: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(os.path.relpath(root / target, path.parent))


def env() -> dict[str, str]:
    drop = ("AI_MEMORY_ROOT", "AI_MEMORY_STATE_DIR")
    return {**{k: v for k, v in os.environ.items() if k not in drop}, **OFFLINE}


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    """A root whose state folder (`state/`, not hidden) lies inside it, with links into it,
    into `.git`, into hidden folders and at a hidden file, and one honest link."""
    base = tmp_path_factory.mktemp("links") / "memory"
    put(base, ".git/config", "[core]\n\tgitconfigmarker = true\n")
    put(base, ".hidden/secret.md", "# Hidden\n\nhiddenfoldermarker\n")
    put(base, "Notes/.env.md", "# Env\n\nhiddenfilemarker\n")
    put(base, ".ai-memory/planted.md", "# Planted\n\ndotstatemarker\n")
    put(base, "Notes/real.md", "# Real note\n\nThe ordinarytoken note. See [[config]] and "
                               "[[hidden]] and [[state]].\n")
    put(base, "state/planted.md", "# Planted\n\nstatefoldermarker\n")
    put(base, "state/refresh-history.jsonl", "")
    (base / "Notes/hidden-dir").symlink_to("../.hidden", target_is_directory=True)
    for rel, target in LINKS.items():
        link(base, rel, target)
    link(base, "alias.md", "Notes/real.md")
    done = subprocess.run([sys.executable, "-m", "memory", "refresh", "--mode", "full",
                           "--root", str(base), "--state-dir", str(base / "state")],
                          capture_output=True, text=True, timeout=900, env=env())
    assert done.returncode == 0, done.stderr[-3000:]
    return base


@pytest.fixture(scope="module")
async def client(root):
    params = StdioServerParameters(
        command=sys.executable, env=env(),
        args=["-m", "memory", "serve", "--root", str(root), "--state-dir",
              str(root / "state"), "--no-watch"])
    with open(root.parent / "serve.stderr", "w") as err:
        async with stdio_client(params, errlog=err) as (read, write):
            async with ClientSession(read, write) as session:
                with anyio.fail_after(60):
                    await session.initialize()
                yield session


def test_no_derived_state_holds_what_a_link_points_at(root):
    planted = {root / "state/planted.md", root / "state/refresh-history.jsonl"}
    derived = [p for p in (root / "state").rglob("*") if p.is_file() and p not in planted]
    assert any(p.suffix in (".sqlite", ".db", ".json") for p in derived)  # an index is there
    for path in derived:
        data = path.read_bytes()
        assert not [m for m in MARKERS if m.encode() in data], path


@pytest.mark.anyio
async def test_search_get_and_resources_never_serve_a_link_out_of_the_notes(client):
    served = set()
    for marker in (*MARKERS, "ordinarytoken"):
        found = await client.call_tool("memory_search", {"query": marker, "status": "any"})
        assert not found.is_error
        served |= {item["path"] for item in found.structured_content["items"]}
    assert served == {"Notes/real.md", "alias.md"}  # the honest link is still a note
    for rel in LINKS:
        got = await client.call_tool("memory_get", {"identity": rel})
        assert got.is_error, rel
        assert not [m for m in MARKERS if m in got.content[0].text]
    listed = {str(r.uri) for r in (await client.list_resources()).resources}
    assert listed and not [u for u in listed if any(
        Path(rel).stem in u for rel in LINKS)]
    for uri in listed:
        for part in (await client.read_resource(uri)).contents:
            assert not [m for m in MARKERS if m in getattr(part, "text", "")], uri


@pytest.mark.anyio
async def test_the_graph_has_no_node_of_a_link_out_of_the_notes(client):
    near = await client.call_tool("memory_neighbors", {"identity": "Notes/real.md",
                                                       "depth": 2})
    assert not near.is_error, near.content
    text = near.content[0].text + str(near.structured_content)
    for rel in LINKS:
        assert rel not in text
    assert not [m for m in MARKERS if m in text]
