"""GraphifyGenerations with real Graphify over real files: build, stage, publish, collect."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from networkx.readwrite import json_graph

from memory.adapters.graphify import GraphifyGenerations, GraphifyGraph
from memory.adapters.graphify.generations import build_timeout_s
from memory.adapters.markdown import MarkdownNoteSource
from memory.domain.markdown import links
from memory.domain.scope import ScopeFilter
from memory.ports.errors import StoreError
from memory.ports.graph_generations import GraphGenerations, GraphStage

VAULT = {
    "Repos/alpha/_repo.md": """\
        ---
        memory_id: repo-alpha
        title: Alpha repository
        ---
        # Alpha
        Start with [[retry-policy]].
        """,
    "Repos/alpha/Notes/retry-policy.md": """\
        ---
        memory_id: retry-policy
        title: Retry Policy
        aliases: [Backoff Rules]
        related: ["[[Deploy Checklist]]"]
        supersedes: [retry-old]
        tags: [retry]
        ---
        # Retry policy
        ## Backoff
        `RetryClient.send` backs off; the storm was ALPHA-142, as ADR-007 decided.
        """,
    "Repos/alpha/Notes/retry-old.md": """\
        ---
        memory_id: retry-old
        title: Retry Policy Old
        status: superseded
        superseded_by: [retry-policy]
        ---
        # Old retries
        Linear retries.
        """,
    "Repos/alpha/Tickets/ALPHA-142/_ticket.md": """\
        ---
        memory_id: alpha-142
        title: ALPHA-142 Retry storm
        ---
        # Retry storm
        """,
    "Decisions/deploy-checklist.md": """\
        ---
        memory_id: deploy-checklist
        title: Deploy Checklist
        ---
        # Deploy checklist
        Check [[Backoff Rules#Backoff|the backoff]] first.
        """,
    "Decisions/a-b.md": """\
        ---
        memory_id: ab-dash
        ---
        # Intro
        The dash one; see [[a_b]].
        """,
    "Decisions/a_b.md": """\
        ---
        memory_id: ab-under
        ---
        # Intro
        The underscore one.
        """,
    "Projects/apollo/_project.md": """\
        ---
        memory_id: apollo
        related_repos: [alpha]
        related: ["[[nowhere]]"]
        ---
        # Apollo
        Links to [[does-not-exist]] and [a file](missing.md).
        """,
    "Workflows/orphan.md": "# Orphan\nNo links at all.\n",
}


def write_vault(root: Path, files: dict[str, str] = VAULT) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


def documents(root: Path):
    source = MarkdownNoteSource(root)
    return [source.load(p) for p in sorted(source.scan().files)]


def graph_data(state: Path, gen_id: str) -> dict:
    return json.loads((state / "graph" / f"gen-{gen_id}" / "graph.json").read_text("utf-8"))


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    base = tmp_path_factory.mktemp("graphify")
    root, state = write_vault(base / "root"), base / "state"
    gens = GraphifyGenerations(root, state)
    stage = gens.build(documents(root))
    facts = stage.facts()
    info = stage.publish()
    return {"root": root, "state": state, "gens": gens, "facts": facts, "info": info,
            "data": graph_data(state, info.id)}


def edges(data: dict) -> set[tuple[str, str, str]]:
    name = {n["id"]: n.get("memory_id") or n["id"] for n in data["nodes"]}
    return {(name[e["source"]], e["relation"], name[e["target"]]) for e in data["links"]}


def test_implements_the_ports(built):
    assert isinstance(built["gens"], GraphGenerations)


def test_published_graph_is_a_directed_node_link_graph_with_one_page_per_note(built):
    data = built["data"]
    graph = json_graph.node_link_graph(data, edges="links")
    assert graph.is_directed() and not graph.is_multigraph()
    pages = [n for n in data["nodes"] if n.get("memory_id")]
    by_id = {}
    for node in pages:
        assert node["node_kind"] == "page"
        by_id.setdefault(node["memory_id"], []).append(node["path"])
    docs = documents(built["root"])
    assert by_id == {d.note.memory_id: [d.note.path] for d in docs}
    facts = built["facts"]
    assert facts.page_notes == frozenset(by_id)
    assert facts.dangling_edges == 0
    assert (facts.nodes, facts.edges) == (len(data["nodes"]), len(data["links"]))
    assert (built["info"].nodes, built["info"].notes) == (facts.nodes, len(docs))


def test_declared_relations_and_scopes_become_edges(built):
    found = edges(built["data"])
    assert ("retry-policy", "related", "deploy-checklist") in found  # by title
    assert ("retry-policy", "supersedes", "retry-old") in found
    assert ("retry-old", "superseded_by", "retry-policy") in found
    assert ("retry-policy", "repository", "repository:alpha") in found
    assert ("apollo", "repository", "repository:alpha") in found  # related_repos
    assert ("apollo", "project", "project:apollo") in found
    assert ("alpha-142", "ticket", "ticket:ALPHA-142") in found
    assert ("retry-policy", "mentions", "ticket:ALPHA-142") in found
    assert ("retry-policy", "tagged", "tag:retry") in found
    assert ("repo-alpha", "references", "retry-policy") in found  # Graphify's own


def test_every_ticket_node_is_a_ticket_the_ticket_scope_finds(built):
    tickets = {n["label"] for n in built["data"]["nodes"] if n.get("node_kind") == "ticket"}
    assert tickets == {"ALPHA-142"}  # ADR-007 is mentioned, and no note is of it
    notes = [d.note for d in documents(built["root"])]
    for ticket in tickets:
        assert any(ScopeFilter(ticket=ticket).admits(n) for n in notes), ticket


def test_alias_links_are_resolved(built):
    link = next(e for e in built["data"]["links"] if e.get("resolved_by") == "alias")
    pages = {n["id"]: n.get("memory_id") for n in built["data"]["nodes"]}
    assert (pages[link["source"]], link["relation"], pages[link["target"]]) == \
        ("deploy-checklist", "references", "retry-policy")
    assert link["source_file"] == "Decisions/deploy-checklist.md"
    assert link["source_location"] == "L6"


def test_files_whose_graphify_ids_collide_stay_apart(built):
    data = built["data"]
    page = {n["memory_id"]: n for n in data["nodes"] if n.get("memory_id")}
    assert page["ab-dash"]["id"] != page["ab-under"]["id"]
    assert page["ab-dash"]["source_file"] == "Decisions/a-b.md"
    assert page["ab-under"]["source_file"] == "Decisions/a_b.md"
    intro = {n["id"]: n["source_file"] for n in data["nodes"] if n.get("label") == "Intro"}
    assert sorted(intro.values()) == ["Decisions/a-b.md", "Decisions/a_b.md"]
    assert ("ab-dash", "references", "ab-under") in edges(data)


def test_links_to_missing_notes_leave_no_dangling_edges(built):
    data = built["data"]
    ids = {n["id"] for n in data["nodes"]}
    assert all(e["source"] in ids and e["target"] in ids for e in data["links"])
    assert data["graph"]["ai_memory"]["unresolved"] >= 2


def test_build_prints_nothing_and_writes_only_into_the_state_dir(tmp_path):
    root, state, home = write_vault(tmp_path / "root"), tmp_path / "state", tmp_path / "home"
    home.mkdir()
    before = sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))
    script = textwrap.dedent(f"""
        from memory.adapters.graphify import GraphifyGenerations
        from memory.adapters.markdown import MarkdownNoteSource
        source = MarkdownNoteSource({str(root)!r})
        docs = [source.load(p) for p in sorted(source.scan().files)]
        GraphifyGenerations({str(root)!r}, {str(state)!r}).build(docs).publish()
        """)
    env = dict(os.environ, HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"))
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env=env, cwd=tmp_path, timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout == ""
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*")) == before
    assert list(home.iterdir()) == []
    assert (state / "cache" / "graphify").is_dir()
    assert not (tmp_path / "graphify-out").exists()


def test_a_discarded_stage_leaves_the_current_generation(built, tmp_path):
    gens = GraphifyGenerations(built["root"], built["state"])
    pointer = (built["state"] / "graph" / "CURRENT").read_text()
    stage = gens.build(documents(built["root"])[:3])
    assert isinstance(stage, GraphStage)
    assert len(stage.facts().page_notes) == 3
    stage.discard()
    assert (built["state"] / "graph" / "CURRENT").read_text() == pointer
    assert not (built["state"] / "graph" / "staging" / stage.id).exists()
    assert GraphifyGraph(built["state"]).current().id == built["info"].id
    assert gens.check_current() == []


def test_publish_collect_and_check_current(tmp_path):
    root, state = write_vault(tmp_path / "root"), tmp_path / "state"
    gens = GraphifyGenerations(root, state)
    assert gens.check_current() and "no graph generation" in gens.check_current()[0]
    docs = documents(root)
    first = gens.build(docs).publish()
    second = gens.build(docs).publish()
    assert second.id > first.id
    pointer = json.loads((state / "graph" / "CURRENT").read_text())
    assert pointer["id"] == second.id
    stale = state / "graph" / "staging" / "crashed-build"
    stale.mkdir(parents=True)
    assert gens.collect(keep=1, grace_seconds=3600) == []
    removed = gens.collect(keep=1, grace_seconds=0)
    assert sorted(removed) == sorted([f"gen-{first.id}", "staging/crashed-build"])
    assert (state / "graph" / f"gen-{second.id}" / "graph.json").is_file()
    assert gens.check_current() == []
    (state / "graph" / f"gen-{second.id}" / "graph.json").write_text("{not json")
    assert "unreadable" in gens.check_current()[0]
    (state / "graph" / "CURRENT").write_text("")
    assert "pointer" in gens.check_current()[0]


def test_a_build_past_its_timeout_fails_cleanly(tmp_path):
    root, state = write_vault(tmp_path / "root"), tmp_path / "state"
    gens = GraphifyGenerations(root, state, timeout_s=0.05)
    with pytest.raises(StoreError, match="timed out after 0.05s .*AI_MEMORY_GRAPH_TIMEOUT_S"):
        gens.build(documents(root))
    assert list((state / "graph" / "staging").iterdir()) == []
    assert not (state / "graph" / "CURRENT").exists()


def test_the_default_time_limit_grows_with_the_root():
    # A fixed limit failed every graph build of a 50k-note root on a busy machine.
    assert build_timeout_s(50_000) >= 2 * build_timeout_s(0)
    assert build_timeout_s(100_000) > build_timeout_s(50_000)


def test_a_build_with_no_time_limit_runs_to_the_end(tmp_path):
    root, state = write_vault(tmp_path / "root"), tmp_path / "state"
    info = GraphifyGenerations(root, state, timeout_s=0).build(documents(root)).publish()
    assert (state / "graph" / f"gen-{info.id}" / "graph.json").is_file()


@pytest.mark.skipif(os.name != "posix", reason="address-space limits are POSIX")
def test_a_build_over_its_memory_cap_fails_cleanly(tmp_path):
    root, state = write_vault(tmp_path / "root"), tmp_path / "state"
    gens = GraphifyGenerations(root, state, memory_mb=48)  # too little to even import Graphify
    with pytest.raises(StoreError, match="graph build failed"):
        gens.build(documents(root))
    assert list((state / "graph" / "staging").iterdir()) == []
    assert (state / "graph" / "last-failed-build.log").read_text("utf-8").strip()


def test_front_matter_with_yaml_aliases_is_kept_from_graphify(tmp_path):
    """Graphify expands YAML aliases; a few hundred bytes of them are gigabytes. The note
    keeps its page node and the edges we derive, without Graphify reading it."""
    rows = ['a: &a ["x","x","x","x","x","x","x","x","x"]']
    rows += [f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]"
             for i in range(8)]
    root = write_vault(tmp_path / "root")
    (root / "Decisions" / "bomb.md").write_text(
        "---\nmemory_id: bomb\n" + "\n".join(rows) + "\n---\n# Bomb\nSee [[retry-policy]].\n",
        encoding="utf-8")
    gens = GraphifyGenerations(root, tmp_path / "state")
    info = gens.build(documents(root)).publish()
    data = graph_data(tmp_path / "state", info.id)
    page = [n for n in data["nodes"] if n.get("path") == "Decisions/bomb.md"]
    assert page and page[0]["node_kind"] == "page"
    assert any(e["source"] == page[0]["id"] and e["relation"] == "references"
               for e in data["links"]), "the note's links still become edges"


AGREEING = {
    "Notes/Hub.md": "\ufeff---\ntitle: Hub\nrelated: ['[[Alpha]]']\n---\n# Hub\n"
                    "See [[Beta]], not `[[Gamma]]` nor ``a `[Delta](Delta.md)` b``.\n"
                    "```\n[[Delta]]\n```\n"
                    "````markdown\n```\n[[Epsilon]] [e](Epsilon.md)\n```\n````\n"
                    "~~~\n[[Gamma]]\n~~~\n"
                    "Last: [z](Zeta.md).\n",
    **{f"Notes/{name}.md": f"# {name}\nA plain note.\n"
       for name in ("Alpha", "Beta", "Gamma", "Delta", "Epsilon", "Zeta")},
}


def test_the_index_and_the_graph_agree_on_every_link(tmp_path):
    """Links in inline code and in fences of three or four backticks (or tildes) are no
    links, front matter after a BOM is front matter: for the index and the graph alike."""
    root = tmp_path / "root"
    for rel, text in AGREEING.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    docs = documents(root)
    hub = next(d for d in docs if d.note.path == "Notes/Hub.md")
    assert hub.note.title == "Hub" and hub.note.related == ("Alpha",)
    assert set(hub.note.links) == {"Beta", "Zeta.md", "Alpha"}
    info = GraphifyGenerations(root, tmp_path / "state").build(docs).publish()
    data = graph_data(tmp_path / "state", info.id)
    pages = {n["id"]: n for n in data["nodes"] if n.get("node_kind") == "page"}
    hub_id = next(i for i, n in pages.items() if n["path"] == "Notes/Hub.md")
    linked = {pages[e["target"]]["path"]: (e["relation"], e["source_location"])
              for e in data["links"] if e["source"] == hub_id and e["target"] in pages}
    assert linked == {"Notes/Alpha.md": ("related", "L3"), "Notes/Beta.md": ("references", "L6"),
                      "Notes/Zeta.md": ("references", "L18")}
    index_lines = {link.target: link.line for link in links(hub.lines, 5)}
    assert (index_lines["Beta"], index_lines["Zeta.md"]) == (6, 18)


def test_a_graph_nested_past_the_recursion_limit_reads_as_damage(tmp_path):
    from memory.adapters.graphify.layout import read_graph_data
    deep = tmp_path / "graph.json"
    deep.write_text('{"nodes": [], "links": [], "x": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(ValueError, match="nested too deeply"):
        read_graph_data(deep)
    for damaged in ('{"nodes": [1], "links": []}', '{"nodes": [{"id": []}], "links": []}',
                    '{"nodes": [{"id": "a", "memory_id": ["x"]}], "links": []}',
                    '{"nodes": [], "links": [{"source": "a"}]}', '{"nodes": [], "links": [3]}'):
        deep.write_text(damaged)
        with pytest.raises(ValueError):
            read_graph_data(deep)


def test_graphify_reads_a_mirror_of_the_parsed_notes_kept_up_to_date(tmp_path):
    """Graphify sees what the index keeps (secrets replaced, front matter blank, the same
    line numbers), never the files; the mirror follows the notes from build to build."""
    root, state = write_vault(tmp_path / "root"), tmp_path / "state"
    secret = "AKIAMIRRORTEST7731XZ"
    (root / "Decisions" / "keys.md").write_text(
        f"---\nmemory_id: keys\nnote: {secret}\n---\n# Keys\nThe key {secret} rotates.\n",
        encoding="utf-8")
    gens = GraphifyGenerations(root, state)
    docs = documents(root)
    info = gens.build(docs).publish()
    mirror = state / "cache" / "graphify" / "mirror"
    keys = (mirror / "Decisions" / "keys.md").read_text("utf-8").split("\n")
    assert keys[:5] == ["", "", "", "", "# Keys"] and secret not in "\n".join(keys)
    assert sorted(p.relative_to(mirror).as_posix() for p in mirror.rglob("*.md")) == \
        sorted(d.note.path for d in docs)
    text = (state / "graph" / f"gen-{info.id}" / "graph.json").read_text("utf-8")
    assert secret not in text and '"frontmatter"' not in text
    kept = (mirror / "Workflows" / "orphan.md").stat().st_mtime_ns
    gens.build([d for d in docs if d.note.path != "Decisions/keys.md"]).publish()
    assert not (mirror / "Decisions" / "keys.md").exists()
    assert (mirror / "Workflows" / "orphan.md").stat().st_mtime_ns == kept
