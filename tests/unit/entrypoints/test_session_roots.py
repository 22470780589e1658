"""Roots belong to a session: one session's workspace never becomes another's default scope."""

from types import SimpleNamespace

import pytest
from builders import World, make_doc
from mcp_types import ListRootsResult, Root

from memory.adapters.inmemory import InMemorySourceControl
from memory.application.search.workspace_scope import WorkspaceScope
from memory.entrypoints.http.workspace import SessionWorkspaces
from memory.entrypoints.mcp_roots import CURRENT_WORKSPACE, LIST_CHANGED, ClientRoots, Workspace


@pytest.fixture
def anyio_backend():
    return "asyncio"


class Client:
    """One client session as the middleware sees it: its roots, its HTTP session id."""

    def __init__(self, session_id, folders, peer="127.0.0.1", headers=None):
        self.folders = list(folders)
        self.asked = 0
        self.session = SimpleNamespace(client_capabilities=SimpleNamespace(roots=object()),
                                       can_send_request=True, send_request=self._list)
        all_headers = {**({"mcp-session-id": session_id} if session_id else {}),
                       **(headers or {})}
        self.request = SimpleNamespace(headers=all_headers, client=SimpleNamespace(host=peer))

    async def _list(self, request, result_type):
        self.asked += 1
        return ListRootsResult(roots=[Root(uri=f"file://{f}") for f in self.folders])

    def ctx(self, method="tools/call"):
        return SimpleNamespace(method=method, session=self.session, request=self.request)


async def workspace_during_call(middleware, client, method="tools/call"):
    seen = []

    async def call_next(ctx):
        seen.append(CURRENT_WORKSPACE.get())
    await middleware(client.ctx(method), call_next)
    return seen[0]


@pytest.mark.anyio
async def test_each_session_is_asked_for_its_own_roots_once_and_again_after_list_changed():
    roots = ClientRoots()
    one, two = Client("s1", ["/src/alpha"]), Client("s2", ["/src/beta"])
    assert (await workspace_during_call(roots, one)).roots == ("/src/alpha",)
    assert (await workspace_during_call(roots, two)).roots == ("/src/beta",)
    assert (await workspace_during_call(roots, one)).roots == ("/src/alpha",)
    assert (one.asked, two.asked) == (1, 1)
    two.folders = ["/src/gamma"]
    await workspace_during_call(roots, two, LIST_CHANGED)
    assert (await workspace_during_call(roots, two)).roots == ("/src/gamma",)
    assert (await workspace_during_call(roots, one)).roots == ("/src/alpha",)
    assert (one.asked, two.asked) == (1, 2)
    assert CURRENT_WORKSPACE.get() is None  # nothing leaks past the call


@pytest.mark.anyio
async def test_the_bridge_header_counts_only_from_this_machine():
    header = {"ai-memory-workspace": "folder=file%3A%2F%2F%2Fsrc%2Falpha&repository=beta"
                                     "&auto_scope=0"}
    local = await workspace_during_call(ClientRoots(), Client("s", [], headers=header))
    assert local == Workspace(roots=(), folder="/src/alpha", repository="beta", auto_scope=False)
    remote = await workspace_during_call(ClientRoots(),
                                         Client("s", [], peer="203.0.113.9", headers=header))
    assert remote == Workspace()


@pytest.mark.anyio
async def test_stdio_still_hands_the_roots_to_the_process():
    applied = []
    client = Client(None, ["/src/alpha"])
    client.request = None
    await workspace_during_call(ClientRoots(applied.append), client)
    assert applied == [["/src/alpha"]]


def test_the_default_scope_follows_the_calling_sessions_workspace():
    world = World([make_doc("Repos/alpha/Notes/A.md", "# A\n\nalpha notes\n"),
                   make_doc("Repos/beta/Notes/B.md", "# B\n\nbeta notes\n")])
    world.refresh("index")
    control = InMemorySourceControl({"/src/alpha": "git@github.com:acme/alpha.git"})

    def make(workspace):
        return WorkspaceScope(source_control=control, catalogue=world.chunks,
                              index=world.generations, cwd=workspace.folder,
                              explicit=workspace.repository, enabled=workspace.auto_scope)
    default = SessionWorkspaces(make)
    cases = [(Workspace(roots=("/home/me/beta",)), ("beta", "mcp-roots:/home/me/beta (folder-name)")),
             (Workspace(folder="/src/alpha/lib"), ("alpha", "cwd:/src/alpha/lib (git-remote:origin)")),
             (Workspace(repository="beta"), ("beta", "configured default")),
             (Workspace(folder="/src/alpha", auto_scope=False), None),
             (None, None)]
    for _ in range(2):
        for workspace, expected in cases:
            token = CURRENT_WORKSPACE.set(workspace)
            try:
                assert default() == expected, workspace
            finally:
                CURRENT_WORKSPACE.reset(token)
