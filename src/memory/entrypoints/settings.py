"""Every setting ai-memory reads from the environment, with its one default, read here only.

The rest of the code is handed these values (through the container, or a call below);
tests/architecture/test_environment_reads.py fails when another module reads the environment.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from attrs import frozen

from memory.domain.errors import InvalidRequest

ROOT_ENV = "AI_MEMORY_ROOT"
STATE_ENV = "AI_MEMORY_STATE_DIR"
REPOSITORY_ENV = "AI_MEMORY_REPOSITORY"  # default repository of searches, instead of inferring
AUTO_SCOPE_ENV = "AI_MEMORY_AUTO_SCOPE"  # 0 / false / off: never infer a default repository
PRECISION_ENV = "AI_MEMORY_EMBEDDING_PRECISION"  # int8 (default) or fp32
MODEL_CACHE_ENV = "AI_MEMORY_MODEL_CACHE"  # the exported model, shared by every root
GRAPH_MEMORY_ENV = "AI_MEMORY_GRAPH_MEMORY_MB"  # address space of a graph build, 0: no cap
GRAPH_TIMEOUT_ENV = "AI_MEMORY_GRAPH_TIMEOUT_S"  # wall-clock limit of a graph build, 0: none
STORE_ENV = "AI_MEMORY_STORE"  # postgresql://...: the index in Postgres instead of SQLite
STORE_SCHEMES = ("postgresql://", "postgres://")
# Sent by `ai-memory connect` to a shared server: its client's folder and the two settings
# above, which are the client entry's own (see entrypoints/mcp_roots.py).
WORKSPACE_HEADER = "ai-memory-workspace"
DEFAULT_PRECISION = "int8"  # measured: twice the speed, the same retrieval quality
# The embedder's precisions, named here too: importing the adapter would load numpy into
# the MCP server's start-up, which must not wait for the model stack.
PRECISIONS = ("int8", "fp32")


@frozen(kw_only=True)
class Settings:
    root: Path
    state_dir: Path
    watch: bool = True
    repository: str | None = None
    auto_scope: bool = True
    cwd: Path | None = None
    embedding_precision: str = DEFAULT_PRECISION
    model_cache: Path | None = None  # None: default_model_cache()
    graph_memory_mb: int | None = None  # None: the graph build's own cap (4 GiB)
    graph_timeout_s: int | None = None  # None: the graph build's own, by the root's size
    read_only: bool = False  # serve without memory_write and memory_edit
    git_commit: bool = False  # each write or edit is one commit of the root's git work tree
    store: str | None = None  # a Postgres URL; None: the SQLite index in state_dir

    @property
    def reads_shared_index(self) -> bool:
        """A read-only server of a shared store: it reads what the indexer publishes and
        never indexes its own root (on another host, one without the notes)."""
        return bool(self.store) and self.read_only

    @classmethod
    def resolve(cls, root: str | None = None, state_dir: str | None = None,
                watch: bool = True, must_exist: bool = True, *, read_only: bool = False,
                git_commit: bool = False, store: str | None = None) -> Settings:
        raw = root or environment_root()
        if not raw:
            raise InvalidRequest(f"no memory root: pass --root DIR or set {ROOT_ENV}")
        path = Path(raw).expanduser().resolve()
        if must_exist and not path.is_dir():
            raise InvalidRequest(f"memory root {path} is not a folder")
        state = state_dir or os.environ.get(STATE_ENV)
        state_path = Path(state).expanduser().resolve() if state else path / ".ai-memory"
        return cls(root=path, state_dir=state_path, watch=watch,
                   repository=(os.environ.get(REPOSITORY_ENV) or "").strip() or None,
                   auto_scope=_flag(os.environ.get(AUTO_SCOPE_ENV), default=True),
                   cwd=_cwd(), embedding_precision=_precision(os.environ.get(PRECISION_ENV)),
                   model_cache=default_model_cache(),
                   graph_memory_mb=_whole(GRAPH_MEMORY_ENV, "megabytes (0: no cap)"),
                   graph_timeout_s=_whole(GRAPH_TIMEOUT_ENV, "seconds (0: no limit)"),
                   read_only=read_only, git_commit=git_commit,
                   store=_store(store or os.environ.get(STORE_ENV)))


def environment_root() -> str | None:
    """The memory root AI_MEMORY_ROOT names, if it names one."""
    return os.environ.get(ROOT_ENV) or None


def default_model_cache() -> Path:
    """Per-user cache of the exported model (~90 MB, made once, shared by every root)."""
    explicit = os.environ.get(MODEL_CACHE_ENV)
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or (
        os.environ.get("LOCALAPPDATA") if sys.platform == "win32" else None)
    return Path(base or Path.home() / ".cache") / "ai-memory" / "models"


def client_scope_settings() -> dict[str, str]:
    """This client's own AI_MEMORY_REPOSITORY / AI_MEMORY_AUTO_SCOPE, as written, for a
    shared server that has settings of its own (see bridge.workspace_header)."""
    return {name: os.environ[name] for name in (REPOSITORY_ENV, AUTO_SCOPE_ENV)
            if name in os.environ}


def token_from(variable: str) -> str:
    """The bearer token in the environment variable `--token-env` names ('' when unset)."""
    return os.environ.get(variable, "").strip()


def machine_environment() -> dict[str, str]:
    """The whole environment, for finding other programs and their settings folders
    (PATH, APPDATA, UV) when installing clients; ai-memory's own settings are read above."""
    return dict(os.environ)


def _store(raw: str | None) -> str | None:
    url = (raw or "").strip()
    if not url:
        return None
    if not url.startswith(STORE_SCHEMES):
        raise InvalidRequest(f"--store / {STORE_ENV} must be a postgresql:// URL, not "
                             f"{url.split('://')[0] + '://...' if '://' in url else 'that'}")
    return url


def _flag(raw: str | None, *, default: bool) -> bool:
    text = (raw or "").strip().lower()
    if not text:
        return default
    return text not in ("0", "false", "no", "off")


def _precision(raw: str | None) -> str:
    text = (raw or "").strip().lower()
    if not text:
        return DEFAULT_PRECISION
    if text not in PRECISIONS:
        raise InvalidRequest(f"{PRECISION_ENV} must be one of {', '.join(PRECISIONS)}, "
                             f"not {raw!r}")
    return text


def _whole(name: str, unit: str) -> int | None:
    """The whole number an environment variable holds; None when it is unset or empty."""
    raw = os.environ.get(name)
    text = (raw or "").strip()
    if not text:
        return None
    if not text.isdigit():
        raise InvalidRequest(f"{name} must be a whole number of {unit}, not {raw!r}")
    return int(text)


def _cwd() -> Path | None:
    try:
        return Path.cwd()
    except OSError:  # the folder we were started in was deleted
        return None
