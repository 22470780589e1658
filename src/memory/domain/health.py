"""What memory_health answers: generations, changes since, model state and self-check."""

from __future__ import annotations

from typing import Any

from attrs import frozen

from memory.domain.messages import Action, Message
from memory.domain.model_state import EmbedderState
from memory.domain.refresh import GenerationInfo

# A reader of a shared store (serve --read-only --store) never indexes its own root.
SHARED_INDEX = ("this server reads a shared index (serve --read-only --store) that another "
                "process publishes: `ai-memory refresh --root NOTES --store URL`, run where "
                "the notes are, keeps it current")
NO_SHARED_INDEX = f"not indexed: no index yet (nothing can be found): {SHARED_INDEX}"
# What a reader's messages tell it to do where a server of its own root says "run
# memory_refresh": only the indexer's refresh, where the notes are, changes a shared index.
SHARED_REFRESH = ("ask for `ai-memory refresh --root NOTES --store URL` where the notes are "
                  "(this server reads a shared index it never refreshes)")
SHARED_FULL_REFRESH = SHARED_REFRESH.replace("refresh --root", "refresh --mode full --root")


def refresh_advice(shared: bool, full: bool = False) -> str:
    """The step a message asks for to refresh: this server's memory_refresh, or on a reader
    of a shared index the indexer's command."""
    if shared:
        return SHARED_FULL_REFRESH if full else SHARED_REFRESH
    return Message("run ", Action.REFRESH_FULL if full else Action.REFRESH)


READ_ONLY_SERVER = Message("this server is read-only (serve --read-only): no ", Action.WRITE,
                           " or ", Action.EDIT)


@frozen(kw_only=True)
class ChangedFiles:
    """Markdown files that differ from the index's manifest (by stat)."""

    added: int = 0
    removed: int = 0
    modified: int = 0
    examples: tuple[str, ...] = ()


@frozen(kw_only=True)
class IndexHealth:
    """The served index; `refreshed_by` is set when another process publishes it (a reader
    of a shared store), whose root is then not compared: this server never indexes it."""

    generation: GenerationInfo | None  # None: no index published yet
    files_changed_since: ChangedFiles | None  # None: the root is not what this index is of
    problems: tuple[str, ...] = ()
    newest_source_change: str | None = None  # ISO time of the newest Markdown edit
    older_than_sources: bool = False
    refreshed_by: str | None = None  # None: this server refreshes it from its root


@frozen(kw_only=True)
class GraphHealth:
    """The served graph; `behind_index` counts notes the index holds and the graph does not
    (or holds otherwise): notes moved or removed make memory_health unhealthy."""

    generation: GenerationInfo | None  # None: no graph published yet
    problems: tuple[str, ...] = ()
    behind_index: int = 0


@frozen(kw_only=True)
class EmbedderHealth:
    model_id: str
    dimension: int
    state: EmbedderState
    failure: str | None  # why the model could not load, when state is FAILED
    semantic_search: bool


@frozen(kw_only=True)
class SelfCheck:
    """A search for a few words of one indexed note must find that note."""

    ok: bool
    detail: str
    probe: str | None = None
    expected: str | None = None


@frozen(kw_only=True)
class SecretNote:
    """A note holding secret-shaped text (the values are never shown)."""

    path: str
    lines: tuple[int, ...]
    kinds: tuple[str, ...]


@frozen(kw_only=True)
class WriteAccess:
    """Whether memory_write and memory_edit are served to the caller, whether each write is
    committed, and why they are not (the server is read-only, or the caller's token is)."""

    enabled: bool
    git_commit: bool = False
    reason: str | None = None  # None while writes are enabled

    @classmethod
    def served(cls, *, read_only: bool, git_commit: bool) -> WriteAccess:
        """What a server started with (or without) --read-only serves."""
        if read_only:
            return cls(enabled=False, reason=READ_ONLY_SERVER)
        return cls(enabled=True, git_commit=git_commit)

    def refused(self, reason: str) -> WriteAccess:
        """This access as seen by a caller whose writes the server refuses for `reason`."""
        if not self.enabled:
            return self  # the server's own reason comes first: no credential changes it
        return WriteAccess(enabled=False, reason=reason)


@frozen(kw_only=True)
class Health:
    healthy: bool
    root: str
    index: IndexHealth
    graph: GraphHealth
    embedder: EmbedderHealth
    last_refresh: dict[str, Any] | None
    feedback_records: int
    self_check: SelfCheck
    writes: WriteAccess
    notes_past_review: tuple[str, ...] = ()
    notes_with_secrets: tuple[SecretNote, ...] = ()
    warnings: tuple[str, ...] = ()
