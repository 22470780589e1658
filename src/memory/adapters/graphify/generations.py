"""GraphifyGenerations: builds a graph in a child process, stages, publishes, collects."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from memory.adapters.graphify.documents import SOURCES_FILE, read_sources
from memory.adapters.graphify.layout import (GRAPH_FILE, GraphLayout, fsync_path,
                                             new_generation_id, read_graph_data, utc_now_iso)
from memory.adapters.graphify.request import DEFAULT_MEMORY_MB, encode_request
from memory.domain.cancellation import CancelToken
from memory.domain.notes import NoteDocument
from memory.domain.refresh import GenerationInfo
from memory.ports.errors import StoreError
from memory.ports.graph_generations import GraphFacts, GraphGenerations, GraphStage

_LOG_TAIL = 2000
_POLL_S = 0.2  # how often a waiting build looks at its cancel token
# A build's wall-clock limit unless AI_MEMORY_GRAPH_TIMEOUT_S says: it grows with the root,
# since a fixed 600 s failed every build of a 50k-note root on a busy machine.
BASE_TIMEOUT_S, TIMEOUT_PER_NOTE_S = 600.0, 0.02


class GraphifyStage(GraphStage):
    """One built graph waiting in `graph/staging/<id>/` to be published or discarded."""

    def __init__(self, layout: GraphLayout, gen_id: str, created: str):
        self._layout, self._id, self._created = layout, gen_id, created
        self._facts: GraphFacts | None = None
        self._done = False

    @property
    def id(self) -> str:
        return self._id

    @property
    def created(self) -> str:
        return self._created

    @property
    def graph_file(self) -> Path:
        return self._layout.stage(self._id) / GRAPH_FILE

    def facts(self) -> GraphFacts:
        if self._facts is None:
            try:
                data = read_graph_data(self.graph_file)
            except (OSError, ValueError) as e:
                raise StoreError(f"staged graph {self._id} is unreadable: {e}") from e
            self._facts = facts_of(data)
        return self._facts

    def sources(self) -> Mapping[str, str]:
        """Path -> content hash of the notes this graph is built from."""
        return read_sources(self._layout.stage(self._id)) or {}

    def info(self) -> GenerationInfo:
        """The generation this stage publishes as."""
        facts = self.facts()
        return GenerationInfo(id=self._id, created=self._created, notes=len(facts.page_notes),
                              nodes=facts.nodes, edges=facts.edges)

    def publish(self) -> GenerationInfo:
        if self._done:
            raise StoreError(f"graph stage {self._id} was already published or discarded")
        self.facts()
        target = self._layout.generation(self._id)
        try:
            fsync_path(self.graph_file)
            os.replace(self._layout.stage(self._id), target)
            os.utime(target)  # collect() measures the grace period from publication
            fsync_path(self._layout.graph_dir)
            info = self.info()
            self._layout.write_pointer(info)
        except OSError as e:
            raise StoreError(f"could not publish graph generation {self._id}: {e}") from e
        self._done = True
        return info

    def discard(self) -> None:
        self._done = True
        shutil.rmtree(self._layout.stage(self._id), ignore_errors=True)


def facts_of(data: dict) -> GraphFacts:
    """Counts and coverage of a parsed node-link graph."""
    ids = {n.get("id") for n in data["nodes"]}
    dangling = sum(1 for e in data["links"]
                   if e.get("source") not in ids or e.get("target") not in ids)
    pages = frozenset(n["memory_id"] for n in data["nodes"]
                      if n.get("node_kind") == "page" and n.get("memory_id"))
    return GraphFacts(nodes=len(ids), edges=len(data["links"]), page_notes=pages,
                      dangling_edges=dangling)


class GraphifyGenerations(GraphGenerations):
    """Graph generations of one memory root under `<state_dir>/graph/`."""

    def __init__(self, root: str | Path, state_dir: str | Path, *,
                 timeout_s: float | None = None, memory_mb: int | None = None):
        self._root = Path(root).resolve()
        self._memory_mb = DEFAULT_MEMORY_MB if memory_mb is None else memory_mb
        self._layout = GraphLayout.of(state_dir)
        self._timeout_s = timeout_s  # None: by the root's size; 0: no limit
        self._building: set[str] = set()
        self._sources: tuple[str, Mapping[str, str] | None] | None = None  # (generation, map)

    @property
    def layout(self) -> GraphLayout:
        return self._layout

    def build(self, documents: Sequence[NoteDocument],
              cancel: CancelToken | None = None) -> GraphifyStage:
        gen_id, created = new_generation_id(), utc_now_iso()
        stage_dir = self._layout.stage(gen_id)
        self._building.add(gen_id)
        try:
            self._write_request(stage_dir, documents)
            self._run_child(stage_dir, cancel or CancelToken(), self._limit_s(len(documents)))
            (stage_dir / "request.json").unlink()
            stage = GraphifyStage(self._layout, gen_id, created)
            stage.facts()
            return stage
        except OSError as exc:  # a read-only state folder, a full disk
            shutil.rmtree(stage_dir, ignore_errors=True)
            raise StoreError(f"graph build cannot write {exc.filename or stage_dir}: "
                             f"{exc.strerror or exc}") from exc
        except BaseException:
            shutil.rmtree(stage_dir, ignore_errors=True)
            raise
        finally:
            self._building.discard(gen_id)

    def _write_request(self, stage_dir: Path, documents: Sequence[NoteDocument]) -> None:
        stage_dir.mkdir(parents=True)
        # the build ends if this process dies (parent_pid)
        request = encode_request(self._root, documents, self._layout.cache_dir,
                                 stage_dir / GRAPH_FILE, parent_pid=os.getpid(),
                                 memory_mb=self._memory_mb)
        (stage_dir / "request.json").write_text(json.dumps(request), encoding="utf-8")
        sources = {d.note.path: d.note.content_hash for d in documents}
        (stage_dir / SOURCES_FILE).write_text(json.dumps(sources), encoding="utf-8")

    def _limit_s(self, notes: int) -> float | None:
        if self._timeout_s is None:
            return build_timeout_s(notes)
        return self._timeout_s or None

    def _run_child(self, stage_dir: Path, cancel: CancelToken, limit_s: float | None) -> None:
        log_path = stage_dir / "graphify.log"
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(
                [sys.executable, "-m", "memory.adapters.graphify.worker",
                 str(stage_dir / "request.json")],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                cwd=stage_dir, env=self._child_env(), start_new_session=(os.name == "posix"))
            try:
                code = _wait(proc, cancel, limit_s)
            except BaseException:
                _kill_tree(proc)
                raise
        if code != 0:
            tail = log_path.read_text(encoding="utf-8", errors="replace")[-_LOG_TAIL:]
            self._keep_failure_log(log_path)
            raise StoreError(f"graph build failed (exit {code}): {tail.strip()}")

    def _child_env(self) -> dict[str, str]:
        """Graphify's caches and any dotfiles it writes stay inside the state directory."""
        home = self._layout.cache_dir / "home"
        env = dict(os.environ)
        env.update(HOME=str(home), USERPROFILE=str(home), XDG_CACHE_HOME=str(home / ".cache"),
                   XDG_CONFIG_HOME=str(home / ".config"), XDG_DATA_HOME=str(home / ".local"),
                   PYTHONIOENCODING="utf-8", PYTHONDONTWRITEBYTECODE="1")
        source_root = str(Path(__file__).resolve().parents[3])  # the folder holding `memory`
        env["PYTHONPATH"] = os.pathsep.join(p for p in (source_root, env.get("PYTHONPATH")) if p)
        home.mkdir(parents=True, exist_ok=True)
        return env

    def _keep_failure_log(self, log_path: Path) -> None:
        try:
            shutil.copyfile(log_path, self._layout.graph_dir / "last-failed-build.log")
        except OSError:
            pass

    def collect(self, keep: int, grace_seconds: float) -> list[str]:
        removed: list[str] = []
        now = time.time()
        current = self._current_id()
        gens = self._layout.generations()
        survivors = set(gens[-max(keep, 1):]) | {current}
        for gen_id in gens:
            path = self._layout.generation(gen_id)
            if gen_id not in survivors and _age(path, now) >= grace_seconds:
                shutil.rmtree(path, ignore_errors=True)
                removed.append(f"gen-{gen_id}")
        if self._layout.staging_dir.is_dir():
            for path in sorted(self._layout.staging_dir.iterdir()):
                if path.name not in self._building and _age(path, now) >= grace_seconds:
                    shutil.rmtree(path, ignore_errors=True)
                    removed.append(f"staging/{path.name}")
        # Pointer temp files of a publish that crashed before its rename.
        for path in sorted(self._layout.graph_dir.glob(".CURRENT.*.tmp")):
            if _age(path, now) >= grace_seconds:
                path.unlink(missing_ok=True)
                removed.append(path.name)
        return removed

    def current(self) -> GenerationInfo | None:
        try:
            return self._layout.read_pointer()
        except (OSError, ValueError):
            return None

    def current_sources(self) -> Mapping[str, str] | None:
        gen_id = self._current_id()
        if gen_id is None:
            return None
        if self._sources is None or self._sources[0] != gen_id:
            self._sources = (gen_id, read_sources(self._layout.generation(gen_id)))
        return self._sources[1]

    def _current_id(self) -> str | None:
        try:
            return self._layout.read_pointer().id
        except (OSError, ValueError):
            return None

    def check_current(self) -> list[str]:
        try:
            info = self._layout.read_pointer()
        except FileNotFoundError:
            return [f"no graph generation published ({self._layout.pointer} missing)"]
        except (OSError, ValueError) as e:
            return [f"graph pointer unreadable: {e}"]
        path = self._layout.generation(info.id) / GRAPH_FILE
        try:
            facts = facts_of(read_graph_data(path))
        except FileNotFoundError:
            return [f"current graph generation {info.id} is missing ({path})"]
        except (OSError, ValueError) as e:
            return [f"current graph generation {info.id} is unreadable: {e}"]
        return facts_problems(facts, info)


def facts_problems(facts: GraphFacts, info: GenerationInfo) -> list[str]:
    """What is wrong with the current graph, judged on its facts."""
    problems = []
    if facts.dangling_edges:
        problems.append(f"current graph has {facts.dangling_edges} dangling edges")
    if not facts.page_notes and info.notes:
        problems.append("current graph has no note page nodes")
    return problems


def _age(path: Path, now: float) -> float:
    try:
        return now - path.stat().st_mtime
    except OSError:
        return 0.0


def build_timeout_s(notes: int) -> float:
    """The default wall-clock limit of a graph build over this many notes."""
    return BASE_TIMEOUT_S + TIMEOUT_PER_NOTE_S * notes


def _wait(proc: subprocess.Popen, cancel: CancelToken, limit_s: float | None) -> int:
    """The child's exit code; Cancelled or StoreError (past limit_s) end the wait early."""
    deadline = None if limit_s is None else time.monotonic() + limit_s
    while True:
        left = _POLL_S if deadline is None else max(0.0, deadline - time.monotonic())
        try:
            return proc.wait(timeout=min(_POLL_S, left))
        except subprocess.TimeoutExpired:
            cancel.raise_if_cancelled()
            if deadline is not None and time.monotonic() >= deadline:
                raise StoreError(f"graph build timed out after {limit_s:g}s (set "
                                 f"AI_MEMORY_GRAPH_TIMEOUT_S to allow more, 0: no limit)") from None


def _kill_tree(proc: subprocess.Popen) -> None:
    """Graphify extracts with a process pool: end the child's whole session, not only it."""
    try:
        if os.name == "posix":
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    except OSError:
        pass
    proc.wait()
