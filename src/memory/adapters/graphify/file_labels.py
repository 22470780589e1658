"""Graphify's file-label disambiguation in linear time, for the pinned graphifyy 0.9.96.

Graphify labels a file node by its base name and, when several files share it, by the
shortest path suffix unique among them (`build._file_label_reassignments`). Its version
compares every such file with every other: a root with a README (or `_ticket.md`) in
thousands of folders spends minutes there (7,717 files of one name at 50k notes). This
gives the same labels by counting suffixes, and the worker installs it before a build.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Hashable, Iterable
from typing import Any


def file_label_reassignments(items: Iterable[tuple[Hashable, Any, Any]]) -> dict:
    """{key: new label} for the file nodes of (key, label, source_file) triples whose base
    name another file shares: each file's shortest path suffix no other file has."""
    from graphify.build import _is_file_node_label

    groups: dict[str, list[tuple[Hashable, str]]] = defaultdict(list)
    for key, label, source in items:
        if source and label and _is_file_node_label(str(label), str(source)):
            basename = str(source).replace("\\", "/").rsplit("/", 1)[-1]
            groups[basename].append((key, str(source)))
    out: dict = {}
    for members in groups.values():
        distinct = {source for _, source in members}
        if len(distinct) < 2:
            continue  # no collision: the bare base name stays
        unique = _shortest_unique_suffixes(distinct)
        for key, source in members:
            out[key] = unique[source]
    return out


def _shortest_unique_suffixes(sources: set[str]) -> dict[str, str]:
    """For each path, the fewest trailing parts no other path ends with (the whole path
    when every suffix is shared, as with `a//b` and `a/b`)."""
    parts = {s: tuple(p for p in s.replace("\\", "/").split("/") if p) for s in sources}
    out: dict[str, str] = {}
    left = set(sources)
    depth = 1
    while left:
        counts = Counter(p[-depth:] for p in parts.values() if len(p) >= depth)
        for source in list(left):
            mine = parts[source]
            if len(mine) < depth:
                out[source] = "/".join(mine)
                left.discard(source)
            elif counts[mine[-depth:]] == 1:
                out[source] = "/".join(mine[-depth:])
                left.discard(source)
        depth += 1
    return out


def install() -> None:
    """Make Graphify's build use this version (one process: the build's worker)."""
    import graphify.build

    graphify.build._file_label_reassignments = file_label_reassignments
