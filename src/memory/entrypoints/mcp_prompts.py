"""Two MCP prompts: recall what memory knows before a task, save what a session learned."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS
from pydantic import Field, ValidationError

from memory.application.search.requests import MAX_NOTE_CHARS, MAX_QUERY_CHARS

MAX_KEY_CHARS = 200

Task = Annotated[str, Field(min_length=1, max_length=MAX_QUERY_CHARS,
                            description="The task about to start, in a sentence or two.")]
Learned = Annotated[str | None, Field(
    max_length=MAX_NOTE_CHARS,
    description="What this session learned, in a few lines (optional: the model sums it up).")]
Repository = Annotated[str | None, Field(max_length=MAX_KEY_CHARS,
                                         description="The repository the work is in.")]
Project = Annotated[str | None, Field(max_length=MAX_KEY_CHARS,
                                      description="The project the work belongs to.")]
Ticket = Annotated[str | None, Field(max_length=MAX_KEY_CHARS,
                                     description="The ticket id, e.g. ALPHA-142.")]


def _filters(repository: str | None, project: str | None, ticket: str | None) -> str:
    given = [f'{name}="{value.strip()}"' for name, value in (
        ("repository", repository), ("project", project), ("ticket", ticket))
        if value and value.strip()]
    return f" with {', '.join(given)}" if given else ""


def recall(task: Task, repository: Repository = None, project: Project = None,
           ticket: Ticket = None) -> str:
    """Before a task: find what long-term memory knows about it, and cite it."""
    return f"""Before you start, find what long-term memory already knows about this task.

Task: {task.strip()}

1. Call memory_search{_filters(repository, project, ticket)}, the task in plain words as \
the query. Search again with identifiers, error strings or file names if the first results \
miss.
2. Read the evidence; call memory_get for more of a note when an item is cut short.
3. Work from what applies, and cite each item you rely on as path:Lstart-Lend. If \
no_answer is true, say that memory holds nothing on it; do not invent."""


def save(learned: Learned = None, repository: Repository = None, project: Project = None,
         ticket: Ticket = None) -> str:
    """After a session: keep what it learned in long-term memory, without secrets."""
    what = (f"What was learned: {learned.strip()}" if learned and learned.strip() else
            "Decide what is worth keeping: decisions and why, conventions, gotchas, commands "
            "that worked, open questions.")
    return f"""Save what this session learned to long-term memory, so the next session starts from it.

{what}

1. Call memory_search{_filters(repository, project, ticket)} for the topic first. If a note \
already covers it, update that note with memory_edit rather than writing a second one.
2. Otherwise create one note per topic with memory_write: a clear title, the repository, \
project or ticket it is about, short factual lines, and where each fact comes from. Where you \
have file tools and the memory root, editing its Markdown files directly is fine too.
3. Never store secrets: no passwords, tokens, keys or connection strings. Write where the \
secret is kept instead (e.g. "the deploy key is in the team vault as DEPLOY_KEY")."""


async def refuse_bad_arguments(ctx: Any, call_next: Callable) -> Any:
    """Middleware: prompts/get with a missing, unknown or oversized argument answers -32602
    saying what was wrong; the SDK would answer an internal error and log a traceback."""
    if ctx.method != "prompts/get":
        return await call_next(ctx)
    try:
        return await call_next(ctx)
    except ValueError as exc:
        raise MCPError(code=INVALID_PARAMS, message=_reason(exc)) from exc


def _reason(exc: ValueError) -> str:
    cause: BaseException | None = exc
    while cause is not None and not isinstance(cause, ValidationError):
        cause = cause.__cause__  # the SDK wraps the rendering failure twice
    if cause is None:
        return str(exc)
    # Field and rule only: the rejected value may be long, or private.
    return "invalid arguments: " + "; ".join(
        f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}"
        for e in cause.errors(include_url=False, include_input=False))


def register_prompts(server: MCPServer) -> None:
    server.prompt(name="recall", title="Recall from memory",
                  description=recall.__doc__)(recall)
    server.prompt(name="save", title="Save to memory", description=save.__doc__)(save)
    server.middleware.append(refuse_bad_arguments)
