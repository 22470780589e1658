"""Where the memory root and its derived state live, from flags or the environment."""

from __future__ import annotations

import os
from pathlib import Path

from attrs import frozen

from memory.domain.errors import InvalidRequest

ROOT_ENV = "AI_MEMORY_ROOT"
STATE_ENV = "AI_MEMORY_STATE_DIR"
REPOSITORY_ENV = "AI_MEMORY_REPOSITORY"  # default repository of searches, instead of inferring
AUTO_SCOPE_ENV = "AI_MEMORY_AUTO_SCOPE"  # 0 / false / off: never infer a default repository
PRECISION_ENV = "AI_MEMORY_EMBEDDING_PRECISION"  # int8 (default) or fp32
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
    store: str | None = None  # a Postgres URL; None: the SQLite index in state_dir

    @classmethod
    def resolve(cls, root: str | None = None, state_dir: str | None = None,
                watch: bool = True, must_exist: bool = True,
                store: str | None = None) -> Settings:
        raw = root or os.environ.get(ROOT_ENV)
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
                   store=_store(store or os.environ.get(STORE_ENV)))


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


def _cwd() -> Path | None:
    try:
        return Path.cwd()
    except OSError:  # the folder we were started in was deleted
        return None
