"""Where graph generations live in the state directory, and the CURRENT pointer discipline."""

from __future__ import annotations

import json
import os
import secrets
from datetime import datetime, timezone
from pathlib import Path

from attrs import frozen

from memory.domain.refresh import GenerationInfo

GRAPH_FILE = "graph.json"


def new_generation_id() -> str:
    """Sortable UTC timestamp (milliseconds) plus a short random suffix."""
    now = datetime.now(timezone.utc)
    return f"{now:%Y%m%dT%H%M%S}{now.microsecond // 1000:03d}Z-{secrets.token_hex(3)}"


def utc_now_iso() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def fsync_path(path: Path) -> None:
    """Flush a file or a directory entry to disk; directories cannot be opened on Windows."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@frozen
class GraphLayout:
    """Paths of the graph part of a state directory."""

    state_dir: Path

    @classmethod
    def of(cls, state_dir: str | Path) -> GraphLayout:
        return cls(Path(state_dir).resolve())

    @property
    def graph_dir(self) -> Path:
        return self.state_dir / "graph"

    @property
    def pointer(self) -> Path:
        return self.graph_dir / "CURRENT"

    @property
    def staging_dir(self) -> Path:
        return self.graph_dir / "staging"

    @property
    def cache_dir(self) -> Path:
        return self.state_dir / "cache" / "graphify"

    def stage(self, gen_id: str) -> Path:
        return self.staging_dir / gen_id

    def generation(self, gen_id: str) -> Path:
        return self.graph_dir / f"gen-{gen_id}"

    def generations(self) -> list[str]:
        """Ids of published generation folders, oldest first."""
        if not self.graph_dir.is_dir():
            return []
        return sorted(p.name[4:] for p in self.graph_dir.iterdir()
                      if p.is_dir() and p.name.startswith("gen-"))

    def read_pointer(self) -> GenerationInfo:
        """The generation CURRENT names; OSError or ValueError when missing or damaged."""
        text = self.pointer.read_text(encoding="utf-8").strip()
        if not text:
            raise ValueError("graph pointer is empty")
        data = json.loads(text) if text.startswith("{") else {"id": text}
        gen_id = data.get("id")
        if not isinstance(gen_id, str) or not gen_id or "/" in gen_id or "\\" in gen_id:
            raise ValueError(f"graph pointer names no valid generation: {text[:80]!r}")
        return GenerationInfo(id=gen_id, created=str(data.get("created") or ""),
                              notes=int(data.get("notes") or 0),
                              nodes=int(data.get("nodes") or 0),
                              edges=int(data.get("edges") or 0))

    def write_pointer(self, info: GenerationInfo) -> None:
        """Replace CURRENT atomically: write a temp file, fsync, rename over."""
        body = json.dumps({"id": info.id, "created": info.created, "notes": info.notes,
                           "nodes": info.nodes, "edges": info.edges})
        tmp = self.graph_dir / f".CURRENT.{os.getpid()}.{secrets.token_hex(3)}.tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(body + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.pointer)
        fsync_path(self.graph_dir)


def read_graph_data(path: Path) -> dict:
    """Parse a node-link graph.json file; ValueError when it is not one, OSError when unread."""
    return parse_graph_data(path.read_bytes(), path.name)


def parse_graph_data(raw: bytes, name: str) -> dict:
    """Parse a node-link graph document (`name` says where it came from in errors);
    ValueError when it is not one, however damaged.

    Damage (flipped bytes, a truncated write, a hostile file or row) must read as damage, so
    that the graph already loaded keeps serving: JSON nested past the recursion limit is
    a ValueError here, and so is any node or link that is not an object with its ends.
    """
    try:
        data = json.loads(raw)
    except RecursionError:
        raise ValueError(f"{name} is nested too deeply to be a graph") from None
    if not isinstance(data, dict) or not isinstance(data.get("nodes"), list) \
            or not isinstance(data.get("links"), list):
        raise ValueError(f"{name} is not a node-link graph (nodes/links missing)")
    if not all(isinstance(n, dict) and _is_key(n.get("id"))
               and isinstance(n.get("memory_id", ""), str) for n in data["nodes"]):
        raise ValueError(f"{name} has a node that is not an object with an id")
    if not all(isinstance(e, dict) and _is_key(e.get("source")) and _is_key(e.get("target"))
               for e in data["links"]):
        raise ValueError(f"{name} has a link that is not an object with two ends")
    return data


def _is_key(value) -> bool:
    return isinstance(value, (str, int)) and not isinstance(value, bool)
