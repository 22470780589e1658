"""The default repository of a search, from the client's roots or the server's work tree."""

from builders import World, make_doc

from memory.adapters.inmemory import InMemorySourceControl
from memory.application.search.workspace_scope import WorkspaceScope

ALPHA_REMOTE = "git@github.com:acme/Alpha.git"


def corpus():
    return [make_doc("Repos/alpha/Notes/Deploy.md", "# Deploy\n\nDeploy alpha with the script.\n"),
            make_doc("Repos/beta/Notes/Deploy.md", "# Deploy\n\nDeploy beta by hand.\n"),
            make_doc("Decisions/Logging.md", "# Logging\n\nLog JSON lines.\n")]


def scope(trees=None, *, world=None, **kw):
    w = world or World(corpus())
    if world is None:
        w.refresh("index")
    control = InMemorySourceControl(trees)
    return WorkspaceScope(source_control=control, catalogue=w.chunks, index=w.generations, **kw), \
        control, w


def test_the_git_remote_of_the_servers_work_tree_names_the_repository():
    infer, _, _ = scope({"/src/alpha-checkout": ALPHA_REMOTE}, cwd="/src/alpha-checkout/lib")
    assert infer() == ("alpha", "cwd:/src/alpha-checkout/lib (git-remote:origin)")


def test_the_folder_name_counts_when_the_remote_names_no_known_repository():
    infer, _, _ = scope({"/src/beta": "https://example.com/x/beta-service.git"}, cwd="/src/beta")
    assert infer() == ("beta", "cwd:/src/beta (folder-name)")


def test_a_repository_the_memory_does_not_know_is_not_inferred():
    infer, _, _ = scope({"/src/gamma": "git@github.com:acme/gamma.git"}, cwd="/src/gamma")
    assert infer() is None


def test_a_cwd_outside_any_work_tree_infers_nothing_even_if_its_name_is_known():
    infer, _, _ = scope({}, cwd="/home/me/alpha")
    assert infer() is None


def test_client_roots_win_over_the_servers_cwd_and_need_no_work_tree():
    infer, _, _ = scope({"/src/alpha": ALPHA_REMOTE}, cwd="/src/alpha")
    infer.set_roots(["/home/me/beta"])
    assert infer() == ("beta", "mcp-roots:/home/me/beta (folder-name)")


def test_roots_naming_two_known_repositories_infer_nothing():
    infer, _, _ = scope({"/src/alpha": ALPHA_REMOTE}, cwd="/src/alpha")
    infer.set_roots(["/src/alpha", "/home/me/beta"])
    assert infer() is None


def test_unknown_roots_fall_back_to_the_cwd():
    infer, _, _ = scope({"/src/alpha": ALPHA_REMOTE}, cwd="/src/alpha")
    infer.set_roots(["/home/me/notes"])
    assert infer()[0] == "alpha"


def test_an_explicit_default_wins_and_disabling_turns_it_all_off():
    explicit, _, _ = scope({"/src/alpha": ALPHA_REMOTE}, cwd="/src/alpha", explicit="Gamma",
                           explicit_source="env:AI_MEMORY_REPOSITORY")
    assert explicit() == ("gamma", "env:AI_MEMORY_REPOSITORY")
    off, _, _ = scope({"/src/alpha": ALPHA_REMOTE}, cwd="/src/alpha", enabled=False)
    assert off() is None


def test_each_folder_is_asked_about_once():
    infer, control, _ = scope({"/src/alpha": ALPHA_REMOTE}, cwd="/src/alpha")
    for _ in range(5):
        infer()
    assert control.asked == ["/src/alpha"]


def test_a_repository_gets_inferred_once_its_first_note_is_indexed():
    w = World(corpus())
    w.refresh("index")
    infer, _, _ = scope({"/src/gamma": "git@github.com:acme/gamma.git"}, world=w, cwd="/src/gamma")
    assert infer() is None
    w.source.put(make_doc("Repos/gamma/_repo.md", "# gamma\n\nThe gamma service.\n"))
    w.refresh("index")
    assert infer() == ("gamma", "cwd:/src/gamma (git-remote:origin)")


def test_the_inferred_repository_scopes_a_search_and_shows_where_it_came_from():
    w = World(corpus())
    w.refresh("index")
    infer, _, _ = scope({"/src/alpha": ALPHA_REMOTE}, world=w, cwd="/src/alpha")
    engine = w.engine.__class__(w.chunks, w.chunks, w.vectors, w.embedder, None, default_repository=infer)
    w.service.engine = engine
    packet = w.service.search("deploy")
    assert {i.path for i in packet.items} == {"Repos/alpha/Notes/Deploy.md"}
    assert packet.scope.inferred == {"repository": "cwd:/src/alpha (git-remote:origin)"}
    explicit = w.service.search("deploy", repository="beta")
    assert {i.path for i in explicit.items} == {"Repos/beta/Notes/Deploy.md"}
    assert explicit.scope.inferred == {}
