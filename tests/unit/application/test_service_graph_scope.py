"""memory_neighbors and memory_path take the scope of a search (the workspace's repository by
default) and never return a node outside it."""

import pytest
from builders import World, make_doc

from memory.domain.errors import NotFound


def docs():
    return [
        make_doc("Repos/alpha/Notes/Deploy.md", "# Deploy\n\nDeploy alpha. See [[Shared cache]] "
                 "and [[Beta deploy]].", memory_id="alpha-deploy"),
        make_doc("Repos/alpha/Notes/Cache.md", "# Shared cache\n\nThe cache.", memory_id="alpha-cache",
                 title="Shared cache"),
        make_doc("Repos/beta/Notes/Deploy.md", "# Beta deploy\n\nDeploy beta. See [[Alpha runbook]].",
                 memory_id="beta-deploy", title="Beta deploy"),
        make_doc("Repos/alpha/Notes/Runbook.md", "# Alpha runbook\n\nRun it.",
                 memory_id="alpha-runbook", title="Alpha runbook"),
        make_doc("Decisions/A.md", "# Decision A\n\nSee [[Inbox B]].", memory_id="dec-a",
                 title="Decision A"),
        make_doc("Inbox/B.md", "# Inbox B\n\nSee [[Decision C]].", memory_id="inbox-b",
                 title="Inbox B"),
        make_doc("Decisions/C.md", "# Decision C\n\nThe end.", memory_id="dec-c",
                 title="Decision C"),
    ]


@pytest.fixture(scope="module")
def world():
    w = World(docs(), default_repository=lambda: ("alpha", "mcp-roots:/src/alpha"))
    assert w.refresh("full").ok
    return w


def note_paths(result) -> set[str]:
    return {n.path for n in result.neighbors if n.kind == "note" or n.path}


def test_neighbors_default_to_the_workspace_repository_and_leave_other_repositories_out(world):
    result = world.service.neighbors("alpha-deploy", depth=2)
    assert result.scope.repository == "alpha" and result.scope.inferred == {
        "repository": "mcp-roots:/src/alpha"}
    assert not any(p.startswith("Repos/beta/") for p in note_paths(result))
    assert "Repos/alpha/Notes/Cache.md" in note_paths(result)
    assert result.warnings and "outside the scope" in result.warnings[0]
    for n in result.neighbors:
        assert all(v.source != "beta-deploy" and v.target != "beta-deploy" for v in n.via)


def test_an_explicit_scope_replaces_the_default(world):
    result = world.service.neighbors("beta-deploy", repository="beta")
    assert result.scope.repository == "beta" and not result.scope.inferred
    assert not any(p.startswith("Repos/alpha/") for p in note_paths(result))


def test_a_note_outside_the_scope_is_not_found_and_the_error_says_which_filter(world):
    with pytest.raises(NotFound, match="outside the requested repository 'alpha' "
                                       r"\(inferred from mcp-roots:/src/alpha\)"):
        world.service.neighbors("beta-deploy")
    with pytest.raises(NotFound, match="outside the requested project 'p'"):
        world.service.path("dec-a", "alpha-deploy", path_prefix="Decisions", project="p")


def test_a_path_leaving_the_scope_is_not_shown(world):
    cross_cutting = world.service.path("dec-a", "dec-c", project="p")  # admits them all
    assert cross_cutting.connected and not cross_cutting.warnings
    through = World(docs())
    assert through.refresh("full").ok
    open_path = through.service.path("dec-a", "dec-c")
    assert open_path.connected and "inbox-b" in {h.target for h in open_path.path.hops}
    fenced = through.service.path("dec-a", "dec-c", path_prefix="Decisions/")
    assert not fenced.connected and fenced.path is None
    assert "outside the scope" in fenced.warnings[0]
    assert fenced.scope.path_prefix == "Decisions/"


def test_neighbors_within_a_folder_stay_in_it(world):
    through = World(docs())
    assert through.refresh("full").ok
    fenced = through.service.neighbors("dec-a", depth=3, path_prefix="Decisions")
    assert all((n.path or "Decisions/").startswith("Decisions/") for n in fenced.neighbors)
    assert "dec-c" not in {n.node for n in fenced.neighbors}  # reached only through Inbox/B
    unfenced = through.service.neighbors("dec-a", depth=3)
    assert {"inbox-b", "dec-c"} <= {n.node for n in unfenced.neighbors}
