"""A memory root on disk driven as people and agents drive it: CLI processes and `serve`.

The reliability tests share it, on either store (SQLite in the state folder, or Postgres
with `store`). It knows the layout of derived state only to inspect it (pointers,
generations, staging; the index through index_state.py) and to make crash leftovers look old.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio.from_thread
from index_state import PostgresIndexState, SqliteIndexState, json_or_none
from mcp import Client
from mcp.client.stdio import StdioServerParameters

OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
CLI_TIMEOUT_S = 300


def child_env() -> dict[str, str]:
    return {**os.environ, **OFFLINE}


class LiveRoot:
    """A memory root folder, its `.ai-memory` state, and the commands that act on it."""

    def __init__(self, path: Path, store: str | None = None):
        self.path = Path(path)
        self.state = self.path / ".ai-memory"
        self.store = store  # a postgresql:// URL: the index is there, the rest in state
        self.index = PostgresIndexState(store) if store else SqliteIndexState(self.state)

    @classmethod
    def create(cls, path: Path, notes: dict[str, str], store: str | None = None) -> LiveRoot:
        root = cls(path, store)
        root.path.mkdir(parents=True, exist_ok=True)
        for rel, text in notes.items():
            root.write(rel, text)
        return root

    def write(self, rel: str, text: str | bytes, atomic: bool = False) -> Path:
        """Write a note in place (as most editors do) or by rename (never seen half-written)."""
        target = self.path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        data = text if isinstance(text, bytes) else text.encode("utf-8")
        if not atomic:
            target.write_bytes(data)
            return target
        temp = target.with_name(f".{target.name}.tmp")
        temp.write_bytes(data)
        os.replace(temp, target)
        return target

    def read_lines(self, rel: str) -> list[str]:
        return (self.path / rel).read_text(encoding="utf-8").split("\n")

    # -- commands ----------------------------------------------------------------------

    def command(self, *args: str) -> list[str]:
        store = ("--store", self.store) if self.store else ()
        return [sys.executable, "-m", "memory", *args, "--root", str(self.path), *store]

    def cli(self, *args: str, timeout: float = CLI_TIMEOUT_S) -> subprocess.CompletedProcess:
        return subprocess.run(self.command(*args), capture_output=True, text=True,
                              timeout=timeout, env=child_env())

    def cli_json(self, *args: str, ok_codes=(0,)) -> dict:
        done = self.cli(*args, "--json")
        assert done.returncode in ok_codes, (args, done.returncode, done.stderr[-3000:])
        return json.loads(done.stdout)

    def refresh(self, mode: str = "index", force: bool = False, ok_codes=(0,)) -> dict:
        """Run `refresh` in its own process, as the CLI or a second agent would."""
        extra = ("--force",) if force else ()
        return self.cli_json("refresh", "--mode", mode, *extra, ok_codes=ok_codes)

    def spawn_refresh(self, mode: str = "index", force: bool = False) -> subprocess.Popen:
        extra = ["--force"] if force else []
        return subprocess.Popen(self.command("refresh", "--mode", mode, *extra),
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, env=child_env())

    def server_params(self) -> StdioServerParameters:
        command, *args = self.command("serve", "--no-watch")
        return StdioServerParameters(command=command, args=args, env=child_env(),
                                     cwd=str(self.path.parent))

    def service(self, embedder=None):
        """The real MemoryService in this process, as a one-shot CLI builds it; pass a
        loaded embedder to share the model between services (it holds no index state)."""
        from dependency_injector import providers

        from memory.entrypoints.container import build
        from memory.entrypoints.settings import Settings
        app = build(Settings.resolve(str(self.path), watch=False, store=self.store))
        if embedder is not None:
            app.gateways.embedder.override(providers.Object(embedder))
        return app.use_cases.service()

    def content_key(self):
        """The key this root's content_hash values are keyed with (as the container finds
        it: the state folder's file, or the store's row)."""
        from memory.entrypoints.container import build
        from memory.entrypoints.settings import Settings
        app = build(Settings.resolve(str(self.path), watch=False, store=self.store))
        return app.gateways.content_key()

    # -- derived state, read only ------------------------------------------------------

    def index_problems(self) -> list[str]:
        """Why what the index pointer names is not one complete, validated generation
        (empty if it is)."""
        return self.index.problems()

    def graph_problems(self) -> list[str]:
        """Why the graph CURRENT names is not a complete graph (empty if it is); with a
        store, what the store's graph check says (the graph is in the database)."""
        if self.store:
            return self._stored_graph_problems()
        from memory.adapters.graphify.layout import read_graph_data
        pointer = self.graph_pointer()
        if pointer is None:
            return ["graph/CURRENT is missing"]
        try:
            data = read_graph_data(self.graph_file(pointer["id"]))
        except (OSError, ValueError) as exc:
            return [f"graph generation {pointer['id']} is unreadable: {exc}"]
        pages = {n["memory_id"] for n in data["nodes"]
                 if n.get("node_kind") == "page" and n.get("memory_id")}
        if len(pages) != pointer.get("notes"):
            return [f"graph {pointer['id']} has {len(pages)} note pages, CURRENT says "
                    f"{pointer.get('notes')}"]
        return []

    def _stored_graph_problems(self) -> list[str]:
        from memory.entrypoints.container import build
        from memory.entrypoints.settings import Settings
        settings = Settings.resolve(str(self.path), watch=False, store=self.store)
        graphs = build(settings).gateways.graphs()
        current = graphs.current()
        return graphs.check_current() or ([] if current else ["no graph in the store"])

    def index_pointer(self) -> dict | None:
        return json_or_none(self.state / "index" / "CURRENT")

    def last_good(self) -> dict | None:
        return json_or_none(self.state / "index" / "last-good.json")

    def graph_pointer(self) -> dict | None:
        return json_or_none(self.state / "graph" / "CURRENT")

    def index_database(self) -> Path | None:
        """The live SQLite index database CURRENT names."""
        return self.index.database()

    def index_id(self) -> str | None:
        """The generation that serves (what a packet's generation.index names)."""
        return self.index.generation_id()

    def graph_file(self, gen_id: str) -> Path:
        return self.state / "graph" / f"gen-{gen_id}" / "graph.json"

    def index_generations(self) -> list[str]:
        """The generations the index still holds, oldest first."""
        return self.index.generations()

    def graph_generations(self) -> list[str]:
        folder = self.state / "graph"
        return sorted(p.name[4:] for p in folder.glob("gen-*") if p.is_dir()) \
            if folder.is_dir() else []

    def leftovers(self) -> list[Path | str]:
        """What a crashed refresh leaves behind: the graph's staging entries and pointer
        temp files, and the index's own (files for SQLite, rows for Postgres)."""
        found: list[Path | str] = []
        folder = self.state / "graph"
        if (folder / "staging").is_dir():
            found += sorted((folder / "staging").iterdir())
        if folder.is_dir():
            found += sorted(folder.glob(".CURRENT.*"))
        return found + self.index.leftovers()

    def age_leftovers(self, seconds: float) -> None:
        """Make crash leftovers look `seconds` old, as if the collection grace had passed."""
        for path in (p for p in self.leftovers() if isinstance(p, Path)):
            for inner in [path, *(path.rglob("*") if path.is_dir() else ())]:
                try:
                    st = inner.stat()
                    os.utime(inner, (st.st_atime - seconds, st.st_mtime - seconds))
                except FileNotFoundError:
                    pass


@contextmanager
def mcp_caller(service) -> Iterator[Callable]:
    """call(tool, arguments) -> CallToolResult, synchronously, over the SDK's in-memory
    transport to the real server built around `service` (for hypothesis' plain examples)."""
    from memory.entrypoints.mcp_server import build_server
    with anyio.from_thread.start_blocking_portal("asyncio") as portal:
        with portal.wrap_async_context_manager(Client(build_server(lambda: service))) as client:
            yield lambda name, arguments: portal.call(client.call_tool, name, arguments)


def warm_model(base: Path) -> None:
    """Refresh a throwaway root once, so the embedding model is exported (about 10 s, once
    per machine) before tests start several processes that would all want it."""
    LiveRoot.create(base / "warm", {"Decisions/Warm.md": "# Warm\n\nwarm up\n"}).refresh()
