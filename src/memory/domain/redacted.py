"""Typed results with every string passed through the secret detector, as it would read."""

from __future__ import annotations

from typing import Any, TypeVar, cast

from attrs import evolve, fields, has

from memory.domain.messages import Action, Message
from memory.domain.secrets import redact_data

T = TypeVar("T")


def redacted(value: T, name: str = "") -> T:
    """`value` with secret-shaped strings replaced by markers, at any depth.

    A string is judged alone and under the name of the field or key holding it
    (`password: hunter22`); numbers, booleans and enums keep their type.
    """
    if type(value) is str:
        return cast(T, redact_data(value, name))
    if isinstance(value, Message):  # its text redacted, its Actions kept for each edge
        return cast(T, Message(*(p if isinstance(p, Action) else redact_data(p, name)
                                 for p in value.parts)))
    if has(type(value)):
        instance: Any = value  # an attrs instance of some class: evolve keeps its type
        return cast(T, evolve(instance, **{f.name: redacted(getattr(instance, f.name), f.name)
                                           for f in fields(type(instance)) if f.init}))
    if isinstance(value, tuple):
        return cast(T, tuple(redacted(item, name) for item in value))
    if isinstance(value, (dict, list)):
        return cast(T, redact_data(value, name))
    return value
