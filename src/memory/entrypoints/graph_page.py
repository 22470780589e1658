"""An interactive HTML page of a GraphPicture (Plotly), whole in one file: it loads nothing.

plotly.js is written into the page from the installed plotly package, so the page works
offline and opening it sends nothing anywhere.
"""

from __future__ import annotations

import html
import json
import math
import os
from collections import Counter
from pathlib import Path

import networkx as nx
import plotly.graph_objects as go

from memory.domain.graph_picture import NOTE, GraphPicture, PictureNode

COLORS = {NOTE: "#4c78a8", "repository": "#f58518", "project": "#54a24b", "ticket": "#e45756",
          "tag": "#72b7b2"}
OTHER_COLOR = "#9d9da1"
NOTE_LABELS_UP_TO = 150  # beyond that, note titles show on hover only
PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; \
script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; font-src data:">
<title>{title}</title>
<style>
 body {{ margin: 0; font: 14px system-ui, sans-serif; color: #222; }}
 header {{ padding: 8px 16px; border-bottom: 1px solid #ddd; }}
 header h1 {{ font-size: 18px; margin: 0 0 4px; }}
 .warning {{ color: #a4301c; margin-top: 4px; }}
 #picked {{ padding: 6px 16px; min-height: 1.4em; font-family: ui-monospace, monospace; }}
</style>
</head>
<body>
<header><h1>{title}</h1><div id="summary">{summary}</div>{warnings}</header>
<div id="picked">Click a node to see its path and memory_id.</div>
{figure}
<script>
document.getElementById({div_id}).on('plotly_click', function (event) {{
  var info = event.points[0].customdata;
  if (info) {{ document.getElementById('picked').textContent = info; }}
}});
</script>
</body>
</html>
"""


def write_page(picture: GraphPicture, target: Path, *, title: str, scope: str) -> None:
    """Lay the picture out and write the page; the file is replaced whole or not at all."""
    figure = _figure(picture, _positions(picture))
    div_id = "memory-graph"
    body = figure.to_html(full_html=False, include_plotlyjs=True, div_id=div_id,
                          config={"displaylogo": False, "responsive": True,
                                  "scrollZoom": True})
    kinds = Counter(n.kind for n in picture.nodes)
    summary = (f"graph generation {picture.generation} &middot; {html.escape(scope)} &middot; "
               + ", ".join(f"{html.escape(kind)}: {count}" for kind, count in kinds.most_common())
               + f", edges: {len(picture.edges)}")
    warnings = "".join(f'<div class="warning">warning: {html.escape(w)}</div>'
                       for w in picture.warnings)
    _write_atomically(target, PAGE.format(title=html.escape(title), summary=summary,
                                          warnings=warnings, figure=body,
                                          div_id=json.dumps(div_id)))


def _positions(picture: GraphPicture) -> dict[str, tuple[float, float]]:
    graph = nx.Graph()
    graph.add_nodes_from(n.id for n in picture.nodes)
    graph.add_edges_from((e.source, e.target) for e in picture.edges)
    return {node: (float(x), float(y))
            for node, (x, y) in nx.spring_layout(graph, seed=7).items()}


def _figure(picture: GraphPicture, pos: dict[str, tuple[float, float]]) -> go.Figure:
    degree = Counter(end for e in picture.edges for end in (e.source, e.target))
    xs, ys = [], []
    for e in picture.edges:
        xs += [pos[e.source][0], pos[e.target][0], None]
        ys += [pos[e.source][1], pos[e.target][1], None]
    traces = [go.Scatter(x=xs, y=ys, mode="lines", hoverinfo="skip", showlegend=False,
                         line={"width": 0.7, "color": "#c8c8c8"})]
    labelled = len(picture.notes) <= NOTE_LABELS_UP_TO
    by_kind: dict[str, list[PictureNode]] = {}
    for node in picture.nodes:
        by_kind.setdefault(node.kind, []).append(node)
    for kind in sorted(by_kind, key=lambda k: (k != NOTE, k)):
        nodes = by_kind[kind]
        traces.append(go.Scatter(
            x=[pos[n.id][0] for n in nodes], y=[pos[n.id][1] for n in nodes],
            mode="markers+text" if labelled or kind != NOTE else "markers",
            name=f"{kind} ({len(nodes)})", text=[_escaped(n.label) for n in nodes],
            textposition="top center", textfont={"size": 10},
            hovertext=[_hover(n) for n in nodes], hoverinfo="text",
            customdata=[_details(n) for n in nodes],
            marker={"size": [7 + 3 * math.sqrt(degree[n.id]) for n in nodes],
                    "color": COLORS.get(kind, OTHER_COLOR), "line": {"width": 0.5,
                                                                     "color": "#ffffff"}}))
    figure = go.Figure(traces)
    figure.update_layout(
        template="plotly_white", height=820, margin={"l": 10, "r": 10, "t": 10, "b": 10},
        hovermode="closest",
        legend={"title": {"text": "click a kind to hide or show it"}, "x": 0, "y": 1,
                "xanchor": "left", "bgcolor": "rgba(255,255,255,0.8)"},
        xaxis={"visible": False}, yaxis={"visible": False, "scaleanchor": "x"})
    return figure


def _escaped(text: str) -> str:
    # Plotly reads <a>, <b>, <br> in text as markup: a title must stay plain text.
    return html.escape(text, quote=False)


def _hover(node: PictureNode) -> str:
    lines = [f"<b>{_escaped(node.label)}</b>", _escaped(node.kind)]
    lines += [_escaped(v) for v in (node.path, node.memory_id) if v]
    return "<br>".join(lines)


def _details(node: PictureNode) -> str:
    parts = [f"{node.kind}: {node.label}"]
    if node.path:
        parts.append(f"path {node.path}")
    if node.memory_id:
        parts.append(f"memory_id {node.memory_id}")
    return " · ".join(parts)


def _write_atomically(target: Path, text: str) -> None:
    temp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        temp.write_text(text, encoding="utf-8")
        os.replace(temp, target)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
