"""`ai-memory serve` keeps itself fresh and scopes searches to the agent's repository.

Real servers (subprocesses) driven over stdio by the MCP SDK's client: edits become
searchable without memory_refresh, bursts are indexed in a few refreshes, and a search
without scope is scoped to the repository of the client's workspace or the server's
git work tree.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from textwrap import dedent

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp_types import ListRootsResult, Root

OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
SCOPE_ENV = ("AI_MEMORY_REPOSITORY", "AI_MEMORY_AUTO_SCOPE", "AI_MEMORY_ROOT",
             "AI_MEMORY_STATE_DIR")

NOTES = {
    "Repos/alpha/_repo.md": "# alpha\n\nThe alpha service: card payments.\n",
    "Repos/alpha/Notes/Deploy.md": """\
        # Deploying alpha

        The deploy checklist for alpha: run the blue green script, then watch the canary.
        """,
    "Repos/beta/_repo.md": "# beta\n\nThe beta service: invoices.\n",
    "Repos/beta/Notes/Deploy.md": """\
        # Deploying beta

        The deploy checklist for beta: copy the jar by hand and restart the service.
        """,
    "Decisions/Deploys.md": """\
        # Deploys

        Every deploy follows a deploy checklist and has a rollback plan.
        """,
}


@pytest.fixture(scope="module")
def anyio_backend():
    return "asyncio"


def write_root(root: Path) -> None:
    for rel, text in NOTES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dedent(text), encoding="utf-8")


def refresh(root: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "memory", "refresh", "--mode", "index", "--root", str(root)],
        capture_output=True, text=True, timeout=600, env=server_env())
    assert done.returncode == 0, done.stderr[-3000:]


def server_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in SCOPE_ENV}
    return {**env, **OFFLINE, **extra}


def history(root: Path) -> list[dict]:
    path = root / ".ai-memory" / "refresh-history.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def make_root(base: Path, models_from: Path | None = None) -> Path:
    """A refreshed memory root; reusing another root's ONNX export saves half a minute."""
    root = base / "memory"
    root.mkdir()
    write_root(root)
    if models_from is not None:
        models = models_from / ".ai-memory" / "cache" / "models"
        if models.is_dir():
            shutil.copytree(models, root / ".ai-memory" / "cache" / "models")
    refresh(root)
    return root


@pytest.fixture(scope="module")
def memory_root(tmp_path_factory) -> Path:
    return make_root(tmp_path_factory.mktemp("watch"))


class Served:
    def __init__(self, session: ClientSession, errlog: Path):
        self.session = session
        self.errlog = errlog

    async def search(self, query: str, **arguments) -> dict:
        with anyio.fail_after(120):
            result = await self.session.call_tool("memory_search", {"query": query, **arguments})
        assert not result.is_error, result.content[0].text
        return result.structured_content

    async def wait_model(self, timeout: float = 120.0) -> None:
        """Until the embedding model is loaded: refreshes need it."""
        with anyio.fail_after(timeout):
            while True:
                health = (await self.session.call_tool("memory_health", {})).structured_content
                if health["embedder"]["state"] == "ready":
                    return
                await anyio.sleep(0.2)

    async def wait_for(self, query: str, path: str, timeout: float = 90.0) -> dict:
        """Search until `path` is among the results; no refresh is ever asked for."""
        deadline = time.monotonic() + timeout
        while True:
            packet = await self.search(query)
            if any(item["path"] == path for item in packet["items"]):
                return packet
            assert time.monotonic() < deadline, \
                f"{path} not searchable after {timeout}s: {packet}\n{self.errlog.read_text()[-3000:]}"
            await anyio.sleep(0.2)


@asynccontextmanager
async def serving(root: Path, errlog: Path, *extra: str, cwd: Path | None = None,
                  env: dict[str, str] | None = None, roots: list[Path] | None = None):
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "memory", "serve", "--root", str(root), *extra],
        env=env or server_env(), cwd=str(cwd) if cwd else None)
    callback = None
    if roots is not None:
        async def callback(context):  # reads the list anew: a test may change it
            return ListRootsResult(roots=[Root(uri=p.as_uri(), name=p.name) for p in roots])
    with errlog.open("w") as err:
        async with stdio_client(params, errlog=err) as (read, write):
            async with ClientSession(read, write, list_roots_callback=callback) as session:
                with anyio.fail_after(60):
                    await session.initialize()
                    await session.list_tools()  # starts the warm-up, and with it the watcher
                yield Served(session, errlog)


@pytest.fixture(scope="module")
async def watched(memory_root, tmp_path_factory):
    errlog = tmp_path_factory.mktemp("logs") / "serve.stderr"
    async with serving(memory_root, errlog) as served:
        yield served


# -- watching --------------------------------------------------------------------------------

@pytest.mark.anyio
async def test_an_edit_becomes_searchable_without_a_refresh_call(watched, memory_root, capsys):
    note = memory_root / "Repos/alpha/Notes/Deploy.md"
    note.write_text(note.read_text() + "\nThe quokka gate holds deploys on Fridays.\n")
    await watched.wait_for("quokka gate", "Repos/alpha/Notes/Deploy.md")

    # Now that the watcher runs: the next edit is indexed with no search to trigger it.
    records = len(history(memory_root))
    saved = time.monotonic()
    note.write_text(note.read_text() + "\nThe wombat freeze starts in December.\n")
    packet = await watched.wait_for("wombat freeze", "Repos/alpha/Notes/Deploy.md", 30)
    seconds = time.monotonic() - saved
    with capsys.disabled():
        print(f"\n[watch] save -> searchable: {seconds * 1000:.0f} ms", file=sys.stderr)
    assert packet["freshness"] in ("current", "refreshed-before-search")
    deadline = time.monotonic() + 30
    while len(history(memory_root)) == records:
        assert time.monotonic() < deadline, "the watcher never refreshed"
        await anyio.sleep(0.1)
    last = history(memory_root)[-1]
    assert last["stages"][-1]["outcome"] == "published"


@pytest.mark.anyio
async def test_a_burst_of_200_changes_is_one_or_a_few_refreshes(watched, memory_root, capsys):
    await watched.search("warm up")  # the watcher is running once the first test passed
    before = len(history(memory_root))
    folder = memory_root / "Repos/alpha/Notes/Burst"
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(200):
        (folder / f"burst-{i:03}.md").write_text(
            f"# Burst {i}\n\nBurst note number {i} mentions token burstword{i}.\n",
            encoding="utf-8")
    # Wait for the refreshes to stop (no new record for 3 s), without searching meanwhile:
    # searches could index on their own and blur what the watcher did.
    refreshes = await wait_until_stable(memory_root, before)
    with capsys.disabled():
        print(f"\n[watch] 200 new notes -> {refreshes} refresh(es)", file=sys.stderr)
    assert 1 <= refreshes <= 5, refreshes
    added = sum(r["stages"][-1]["added"] for r in history(memory_root)[before:])
    assert added == 200
    packet = await watched.search("burstword199")
    assert packet["items"][0]["path"] == "Repos/alpha/Notes/Burst/burst-199.md"
    assert packet["freshness"] == "current"


async def wait_until_stable(root: Path, before: int, quiet: float = 3.0,
                            timeout: float = 180.0, require_new: bool = True) -> int:
    """New refresh records since `before`, once none came for `quiet` seconds."""
    deadline, last_change, count = time.monotonic() + timeout, time.monotonic(), before
    while time.monotonic() - last_change < quiet or (require_new and count == before):
        assert time.monotonic() < deadline, f"no refresh: {count - before}"
        await anyio.sleep(0.2)
        now = len(history(root))
        if now != count:
            count, last_change = now, time.monotonic()
    return count - before


@pytest.mark.anyio
async def test_several_servers_on_one_root_refresh_a_change_once(watched, memory_root, tmp_path):
    async with AsyncExitStack() as stack:
        others = [await stack.enter_async_context(serving(memory_root, tmp_path / f"{i}.stderr"))
                  for i in range(2)]
        for served in others:  # each watcher is up once it says so
            with anyio.fail_after(120):
                while "watching" not in served.errlog.read_text():
                    await served.search("warm up")
                    await anyio.sleep(0.2)
        before = len(history(memory_root))
        before += await wait_until_stable(memory_root, before, quiet=2.0, require_new=False)
        note = memory_root / "Decisions/Deploys.md"
        note.write_text(note.read_text() + "\nThe okapi window opens at noon.\n")
        assert await wait_until_stable(memory_root, before) == 1  # three servers, one refresh
        for served in (watched, *others):
            packet = await served.search("okapi window")
            assert packet["items"][0]["path"] == "Decisions/Deploys.md"


@pytest.mark.anyio
async def test_without_watching_a_search_still_reads_your_writes(scoped_root, tmp_path):
    # scoped_root: no watching server runs there to index the edit first
    async with serving(scoped_root, tmp_path / "serve.stderr", "--no-watch") as served:
        await served.wait_model()
        note = scoped_root / "Decisions/Deploys.md"
        note.write_text(note.read_text() + "\nA capybara review signs off hotfixes.\n")
        await anyio.sleep(1.1)  # searches look at the root at most once a second
        packet = await served.search("capybara review")
        assert packet["freshness"] == "refreshed-before-search", packet["warnings"]
        assert packet["items"][0]["path"] == "Decisions/Deploys.md"
        assert (await served.search("capybara review"))["freshness"] == "current"


# -- automatic scope -------------------------------------------------------------------------

def git_work_tree(folder: Path, remote: str) -> Path:
    folder.mkdir(parents=True)
    git = ["git", "-C", str(folder)]
    subprocess.run([*git, "init", "-q"], check=True, timeout=30)
    subprocess.run([*git, "remote", "add", "origin", remote], check=True, timeout=30)
    return folder


@pytest.fixture(scope="module")
def scoped_root(tmp_path_factory, memory_root) -> Path:
    return make_root(tmp_path_factory.mktemp("scope"), models_from=memory_root)


def paths(packet: dict) -> set[str]:
    return {item["path"] for item in packet["items"]}


@pytest.mark.anyio
async def test_the_git_remote_of_the_servers_folder_scopes_searches(scoped_root, tmp_path):
    checkout = git_work_tree(tmp_path / "checkout", "git@github.com:acme/Alpha.git")
    async with serving(scoped_root, tmp_path / "serve.stderr", "--no-watch",
                       cwd=checkout) as served:
        packet = await served.search("deploy checklist", limit=10)
        assert packet["scope"]["repository"] == "alpha"
        assert "root_scope" not in packet["scope"]
        assert packet["scope"]["inferred"] == {
            "repository": f"cwd:{checkout} (git-remote:origin)"}
        found = paths(packet)
        assert {"Repos/alpha/Notes/Deploy.md", "Decisions/Deploys.md"} <= found
        assert not any(p.startswith("Repos/beta/") for p in found)

        explicit = await served.search("deploy checklist", repository="beta", limit=10)
        assert "inferred" not in explicit["scope"]
        assert "Repos/beta/Notes/Deploy.md" in paths(explicit)
        assert not any(p.startswith("Repos/alpha/") for p in paths(explicit))


@pytest.mark.anyio
@pytest.mark.filterwarnings("ignore:The roots capability is deprecated")
async def test_client_roots_scope_searches_and_win_over_the_cwd(scoped_root, tmp_path):
    checkout = git_work_tree(tmp_path / "checkout", "git@github.com:acme/alpha.git")
    workspace = tmp_path / "beta"  # a plain folder: its name is the key
    workspace.mkdir()
    roots = [workspace]
    async with serving(scoped_root, tmp_path / "serve.stderr", "--no-watch", cwd=checkout,
                       roots=roots) as served:
        packet = await served.search("deploy checklist", limit=10)
        assert packet["scope"]["inferred"] == {"repository": f"mcp-roots:{workspace} (folder-name)"}
        assert "Repos/beta/Notes/Deploy.md" in paths(packet)
        assert not any(p.startswith("Repos/alpha/") for p in paths(packet))

        # The client opens another folder and says so: the server asks again.
        other = git_work_tree(tmp_path / "work", "https://github.com/acme/alpha")
        roots[:] = [other]
        await served.session.send_roots_list_changed()
        packet = await served.search("deploy checklist", limit=10)
        assert packet["scope"]["inferred"] == {
            "repository": f"mcp-roots:{other} (git-remote:origin)"}
        assert not any(p.startswith("Repos/beta/") for p in paths(packet))


@pytest.mark.anyio
async def test_unknown_repositories_and_switched_off_scope_infer_nothing(scoped_root, tmp_path):
    unknown = git_work_tree(tmp_path / "gamma", "https://github.com/acme/gamma.git")
    async with serving(scoped_root, tmp_path / "a.stderr", "--no-watch", cwd=unknown) as served:
        packet = await served.search("deploy checklist", limit=10)
        assert "inferred" not in packet["scope"] and "repository" not in packet["scope"]
        assert "Repos/beta/Notes/Deploy.md" in paths(packet)  # not an empty search
    alpha = git_work_tree(tmp_path / "alpha", "git@github.com:acme/alpha.git")
    async with serving(scoped_root, tmp_path / "b.stderr", "--no-watch", cwd=alpha,
                       env=server_env(AI_MEMORY_AUTO_SCOPE="0")) as served:
        assert "inferred" not in (await served.search("deploy checklist"))["scope"]
    async with serving(scoped_root, tmp_path / "c.stderr", "--no-watch", cwd=alpha,
                       env=server_env(AI_MEMORY_REPOSITORY="beta")) as served:
        packet = await served.search("deploy checklist", limit=10)
        assert packet["scope"]["inferred"] == {"repository": "env:AI_MEMORY_REPOSITORY"}
        assert not any(p.startswith("Repos/alpha/") for p in paths(packet))


# -- health ----------------------------------------------------------------------------------

@pytest.mark.anyio
async def test_health_says_when_the_index_is_older_than_the_notes(scoped_root, tmp_path):
    note = scoped_root / "Repos/beta/_repo.md"
    async with serving(scoped_root, tmp_path / "serve.stderr", "--no-watch") as served:
        later = time.time() + 5
        os.utime(note, (later, later))
        result = await served.session.call_tool("memory_health", {})
        index = result.structured_content["index"]
        assert index["older_than_sources"] is True
        assert index["files_changed_since"]["modified"] == 1
        assert index["newest_source_change"]


# -- the index and the graph follow what happens to the state folder and the notes ----------

@pytest.mark.anyio
async def test_a_deleted_state_folder_is_noticed_and_rebuilt_in_the_background(tmp_path):
    root = tmp_path / "memory"
    root.mkdir()
    write_root(root)
    for i in range(150):  # more than a search indexes by itself: the background does it
        note = root / "Bulk" / f"bulk-{i:03}.md"
        note.parent.mkdir(exist_ok=True)
        note.write_text(f"# Bulk {i}\n\nBulk note {i} names the token bulkword{i}.\n")
    refresh(root)
    async with serving(root, tmp_path / "serve.stderr") as served:
        await served.wait_model()
        assert (await served.search("blue green canary"))["items"]
        shutil.rmtree(root / ".ai-memory")
        packet = await served.search("blue green canary")
        assert packet["freshness"] == "not-indexed", packet
        assert any(w.startswith("index being built:") for w in packet["warnings"]), packet
        found = await served.wait_for("bulkword149", "Bulk/bulk-149.md", 300)
        assert found["freshness"] in ("current", "refreshed-before-search")
        assert (await served.search("blue green canary"))["items"][0]["path"] \
            == "Repos/alpha/Notes/Deploy.md"


@pytest.mark.anyio
async def test_the_graph_follows_a_note_moved_between_folders(tmp_path):
    root = tmp_path / "memory"
    root.mkdir()
    write_root(root)
    done = subprocess.run([sys.executable, "-m", "memory", "refresh", "--mode", "full",
                           "--root", str(root)], capture_output=True, text=True, timeout=600,
                          env=server_env())
    assert done.returncode == 0, done.stderr[-3000:]
    async with serving(root, tmp_path / "serve.stderr") as served:
        await served.wait_model()
        with anyio.fail_after(120):
            while "watching" not in served.errlog.read_text():
                await anyio.sleep(0.2)
        moved = root / "Repos/beta/Notes/Deploy-from-alpha.md"
        (root / "Repos/alpha/Notes/Deploy.md").rename(moved)
        await served.wait_for("blue green script", "Repos/beta/Notes/Deploy-from-alpha.md")
        deadline = time.monotonic() + 300
        while True:  # the graph is rebuilt once the root has been quiet for a while
            result = await served.session.call_tool(
                "memory_neighbors", {"identity": "Repos/beta/Notes/Deploy-from-alpha.md"})
            if not result.is_error:
                break
            assert "not in graph generation" in result.content[0].text, result.content[0].text
            assert time.monotonic() < deadline, served.errlog.read_text()[-3000:]
            await anyio.sleep(0.5)
        neighbors = result.structured_content["neighbors"]
        assert any(n["node"] == "repository:beta" or n.get("label") == "beta"
                   for n in neighbors), neighbors
