"""JSON Schema of a typed result, by the converter's own rules (EXPORTED, HIDDEN, SPARSE).

Tools publish these as their outputSchema; a test validates every tool's structured
content against its schema, so the two cannot drift.
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Mapping, Sequence
from enum import Enum
from typing import Any

import attrs

from memory.entrypoints.converter import EXPORTED, SPARSE, exported_fields

SCALARS = {str: "string", int: "integer", float: "number", bool: "boolean",
           type(None): "null"}


def schema_of(cls: type) -> dict[str, Any]:
    """The schema of an attrs result class: an object with every exported name required."""
    hints = typing.get_type_hints(cls)
    properties = {name: _schema(hints[name]) for name in exported_fields(cls)}
    for name in EXPORTED.get(cls, ()):
        prop = inspect.getattr_static(cls, name)
        properties[name] = _schema(typing.get_type_hints(prop.fget)["return"])
    sparse = SPARSE.get(cls, ())
    schema: dict[str, Any] = {"type": "object", "properties": properties,
                              "required": [name for name in properties if name not in sparse],
                              "additionalProperties": False}
    if cls.__doc__:
        schema["description"] = inspect.cleandoc(cls.__doc__)
    return schema


def _schema(hint: Any) -> dict[str, Any]:
    if hint is Any:
        return {}
    if hint in SCALARS:
        return {"type": SCALARS[hint]}
    if isinstance(hint, type) and issubclass(hint, Enum):
        return {"type": "string", "enum": [member.value for member in hint]}
    if isinstance(hint, type) and attrs.has(hint):
        return schema_of(hint)
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return {"anyOf": [_schema(arg) for arg in args]}
    if hint in (dict, Mapping) or origin in (dict, Mapping):
        value = args[1] if len(args) == 2 else Any
        return {"type": "object", **({"additionalProperties": _schema(value)}
                                     if value is not Any else {})}
    if origin in (tuple, list, Sequence, frozenset, set):
        item = args[0] if args and (origin is not tuple or args[-1] is Ellipsis) else Any
        return {"type": "array", **({"items": _schema(item)} if item is not Any else {})}
    raise TypeError(f"no JSON schema for {hint!r}")
