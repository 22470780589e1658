"""The tools' arguments: each a JSON-schema property with its bounds, and no key but these.

An argument the schema does not name is refused, not ignored: `repo=` for `repository=`
would otherwise search every repository while the agent believes it searched one.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

from memory.application.search.requests import (MAX_DEPTH, MAX_LIMIT, MAX_NAME_CHARS, MAX_NOTE_CHARS,
                                         MAX_QUERY_CHARS)

MAX_KEY_CHARS = 200  # requests.optional_key's bound on scope filters

Query = Annotated[str, Field(
    min_length=1, max_length=MAX_QUERY_CHARS,
    description="What you want to know, in plain words; include identifiers, error strings, "
                "ticket ids (e.g. ALPHA-142) or file names when you have them.")]
FeedbackQuery = Annotated[str, Field(
    min_length=1, max_length=MAX_QUERY_CHARS,
    description="The query of the memory_search call whose result you are rating, as you "
                "sent it.")]
Identity = Annotated[str, Field(
    min_length=1, max_length=MAX_NAME_CHARS,
    description="A note's memory_id, its path relative to the memory root, or its title.")]
RootScope = Annotated[str | None, Field(
    max_length=MAX_KEY_CHARS, description="Only notes of this root scope: 'work' or 'personal'.")]
Repository = Annotated[str | None, Field(
    max_length=MAX_KEY_CHARS,
    description="Only notes about this repository key (plus cross-cutting notes). Without "
                "repository, project or ticket, the workspace's repository is used when "
                "memory knows it (scope.inferred says so).")]
Project = Annotated[str | None, Field(
    max_length=MAX_KEY_CHARS,
    description="Only notes about this project key (plus cross-cutting notes).")]
Ticket = Annotated[str | None, Field(
    max_length=MAX_KEY_CHARS, description="Only notes about this ticket id, e.g. ALPHA-142.")]
Statuses = Literal["active", "needs-review", "superseded", "archived", "any"]
StatusArg = Annotated[Statuses, Field(
    description="Note status to admit; 'active' (default) means current knowledge "
                "(active and needs-review notes); 'any' includes superseded and archived ones.")]
GraphStatus = Annotated[Statuses, Field(
    description="Note status to admit; 'any' (default) keeps superseded and archived notes, "
                "whose relations (what superseded what) are part of the graph.")]
PathPrefix = Annotated[str | None, Field(
    max_length=MAX_KEY_CHARS,
    description="Only notes under this folder, relative to the memory root (e.g. 'Repos/api' "
                "or 'Repos/api/'); whole folder names only: 'Repos/a' never matches "
                "'Repos/a-legacy/'.")]
Limit = Annotated[int, Field(ge=1, le=MAX_LIMIT, description="Most evidence items to return.")]
Line = Annotated[int | None, Field(ge=1, le=10**9, description="1-based line number (inclusive).")]
Depth = Annotated[int, Field(ge=1, le=MAX_DEPTH, description="Graph hops to follow (1-4).")]
Mode = Annotated[Literal["index", "full"], Field(
    description="'index': re-index changed notes (fast). "
                "'full': also rebuild the knowledge graph.")]
Force = Annotated[bool, Field(description="Publish a new generation even if nothing changed.")]
Relevance = Annotated[Literal["relevant", "irrelevant", "missing"], Field(
    description="'relevant' or 'irrelevant' for a returned item; 'missing' for a note that "
                "should have been returned.")]
FeedbackNote = Annotated[str | None, Field(
    max_length=MAX_NOTE_CHARS, description="Optional short reason, in your own words.")]


def strict(arguments: type, tool: str) -> type:
    """`arguments` (the SDK's model of a tool's arguments) refusing any key it does not
    name, with the list of those it does; its schema says `additionalProperties: false`."""
    valid = [field.alias or name for name, field in arguments.model_fields.items()]

    def known_keys_only(cls, data: Any) -> Any:
        unknown = [key for key in data if key not in valid] if isinstance(data, dict) else []
        if unknown:
            raise PydanticCustomError(
                "unknown_argument", "unknown argument {unknown}; {tool} takes {valid}",
                {"unknown": ", ".join(repr(str(k)[:40]) for k in unknown[:5]), "tool": tool,
                 "valid": ", ".join(valid) or "no arguments"})
        return data

    namespace = {"model_config": ConfigDict(extra="forbid", arbitrary_types_allowed=True,
                                            title=arguments.__name__),
                 "known_keys_only": model_validator(mode="before")(classmethod(known_keys_only))}
    return type(arguments.__name__, (arguments,), namespace)
