"""The edge's one cattrs converter: typed results to JSON data (MCP structured content, --json).

A result's JSON is its attrs fields, plus the few derived values named in EXPORTED, minus
the internals in HIDDEN, leaving out the SPARSE fields that are empty; output_schema.py
derives every tool's outputSchema from the same rules, so the wire shape is written once:
in the result types.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from typing import Any

import attrs
from cattrs import Converter

from memory.domain.evidence import AppliedScope, EvidenceItem, EvidencePacket
from memory.domain.explanation import Explanation
from memory.domain.graph import GraphPath
from memory.domain.health import IndexHealth, WriteAccess
from memory.domain.messages import TOOL_WORDS, Message
from memory.domain.refresh import GenerationInfo, RefreshReport, ValidationReport

EXPORTED: dict[type, tuple[str, ...]] = {
    EvidenceItem: ("citation",),
    GraphPath: ("length",),
    RefreshReport: ("ok", "index_generation", "graph_generation"),
    ValidationReport: ("ok",),
}
HIDDEN: dict[type, tuple[str, ...]] = {
    GenerationInfo: ("manifest",),  # the whole source manifest: thousands of entries
}
# Keys clients test for presence ("inferred" in scope): absent when None or empty.
SPARSE: dict[type, tuple[str, ...]] = {
    AppliedScope: ("root_scope", "repository", "project", "ticket", "path_prefix",
                   "query_tickets", "inferred"),
    Explanation: ("identity",),  # only when an identity was asked about
    EvidenceItem: ("cut_lines",),  # only on an item cut to fit the budget
    EvidencePacket: ("leads",),  # only when a question memory cannot answer has some
    IndexHealth: ("refreshed_by",),  # only on a reader of a shared index
    WriteAccess: ("reason",),  # only when writes are off
}
FLOAT_DIGITS = 6

converter = Converter()


def exported_fields(cls: type) -> list[str]:
    """The attrs fields of a result type that go on the wire, in order."""
    hidden = HIDDEN.get(cls, ())
    return [f.name for f in attrs.fields(cls) if f.name not in hidden]


def _attrs_hook(cls: type) -> Callable[[Any], dict]:
    names = [*exported_fields(cls), *EXPORTED.get(cls, ())]
    sparse = set(SPARSE.get(cls, ()))

    def unstructure(value: Any) -> dict:
        shown = ((name, getattr(value, name)) for name in names)
        return {name: converter.unstructure(item) for name, item in shown
                if name not in sparse or item not in (None, (), {}, "")}
    return unstructure


converter.register_unstructure_hook_factory(attrs.has, _attrs_hook)
converter.register_unstructure_hook(float, lambda x: round(float(x), FLOAT_DIGITS))
converter.register_unstructure_hook(Enum, lambda e: e.value)
# A message on the wire (MCP structured content) names the MCP tools; the CLI words its
# messages before they get here (wording.in_cli_words).
converter.register_unstructure_hook(Message, lambda m: m.worded(TOOL_WORDS))
for _sequence in (tuple, list, frozenset, set):
    converter.register_unstructure_hook(
        _sequence, lambda items: [converter.unstructure(item) for item in items])
converter.register_unstructure_hook(
    dict, lambda mapping: {str(k): converter.unstructure(v) for k, v in mapping.items()})


def to_json(result: Any) -> Any:
    """JSON-ready data (dicts, lists, str, int, float, bool, None) for a typed result."""
    return converter.unstructure(result)
