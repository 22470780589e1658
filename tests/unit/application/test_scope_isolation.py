"""Guarantee 6: no search result, and no ranked candidate, ever falls outside the requested
root_scope / repository / project / ticket / status / path_prefix.

Roots and filters are generated; what a filter admits is decided by an oracle written from
the generated note specs (repository and project filters also admit cross-cutting notes),
independently of ScopeFilter, which is checked to agree with it.
"""

from __future__ import annotations

import os

from attrs import frozen
from builders import World, make_doc
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory.domain.scope import ScopeFilter, StatusFilter

EXAMPLES = int(os.environ.get("AI_MEMORY_HYPOTHESIS_EXAMPLES", "150"))
REPOS = ["api", "web", "billing"]
PROJECTS = ["apollo", "zeus"]
TICKETS = ["ALPHA-1", "BETA-22"]
VOCABULARY = ["retry", "timeout", "cache", "deploy", "webhook", "schema", "token", "queue"]
STATUSES = ["active", "needs-review", "superseded", "archived"]


@frozen
class Spec:
    """One generated note: where it lives and what its front matter says."""

    path: str
    memory_id: str
    repository: str | None
    project: str | None
    ticket: str | None
    root_scope: str
    status: str
    related_repos: tuple[str, ...]
    related_projects: tuple[str, ...]
    superseded_by: tuple[str, ...]
    words: tuple[str, ...]

    @property
    def cross_cutting(self) -> bool:
        return not (self.repository or self.project or self.ticket or self.related_repos
                    or self.related_projects)

    @property
    def effective_status(self) -> str:
        return "superseded" if self.superseded_by and self.status == "active" else self.status


@st.composite
def specs(draw, number: int) -> Spec:
    place = draw(st.sampled_from(["repo", "ticket", "project", "project-ticket", "decision",
                                  "tool", "loose"]))
    repo, project, ticket = draw(st.sampled_from(REPOS)), draw(st.sampled_from(PROJECTS)), \
        draw(st.sampled_from(TICKETS))
    name = f"Note {number}.md"
    path, owner = {
        "repo": (f"Repos/{repo}/Notes/{name}", (repo, None, None)),
        "ticket": (f"Repos/{repo}/Tickets/{ticket}/{name}", (repo, None, ticket)),
        "project": (f"Projects/{project}/Notes/{name}", (None, project, None)),
        "project-ticket": (f"Projects/{project}/Tickets/{ticket}/{name}", (None, project, ticket)),
        "decision": (f"Decisions/{name}", (None, None, None)),
        "tool": (f"Tools/{name}", (None, None, None)),
        "loose": (f"Inbox/{name}", (None, None, None)),
    }[place]
    return Spec(path=path, memory_id=f"note-{number}", repository=owner[0], project=owner[1],
                ticket=owner[2], root_scope=draw(st.sampled_from(["work", "personal"])),
                status=draw(st.sampled_from(STATUSES)),
                related_repos=tuple(draw(st.lists(st.sampled_from(REPOS), max_size=2))),
                related_projects=tuple(draw(st.lists(st.sampled_from(PROJECTS), max_size=1))),
                superseded_by=tuple(draw(st.lists(st.just("note-0"), max_size=1))),
                words=tuple(draw(st.lists(st.sampled_from(VOCABULARY), min_size=2, max_size=6))))


@st.composite
def roots(draw) -> list[Spec]:
    count = draw(st.integers(min_value=1, max_value=24))
    return [draw(specs(i)) for i in range(count)]


def case_variants(value: str) -> st.SearchStrategy[str]:
    return st.sampled_from([value, value.upper(), value.lower(), f" {value} "])


filters = st.fixed_dictionaries({}, optional={
    "root_scope": st.sampled_from(["work", "personal", "elsewhere"]).flatmap(case_variants),
    "repository": st.sampled_from([*REPOS, "nowhere"]).flatmap(case_variants),
    "project": st.sampled_from([*PROJECTS, "nothing"]).flatmap(case_variants),
    "ticket": st.sampled_from([*TICKETS, "GAMMA-9"]).flatmap(case_variants),
    "status": st.sampled_from([*STATUSES, "any"]),
    "path_prefix": st.sampled_from(["Repos/", "repos/api/", "Repos/web/Tickets/", "Projects/",
                                    "Decisions/", "Inbox/", "Tools", "./Repos/billing"]),
})
queries = st.one_of(
    st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=4).map(" ".join),
    st.tuples(st.sampled_from(TICKETS), st.sampled_from(VOCABULARY)).map(" ".join),
    st.sampled_from(["note-3", "Note 2", "Repos/api/Notes/Note 1.md"]))


def admitted(spec: Spec, scope: dict) -> bool:
    """The oracle: what the resolved scope (as the packet reports it) lets through."""
    key = lambda v: (v or "").strip().lower()  # noqa: E731
    if scope.get("root_scope") and key(spec.root_scope) != key(scope["root_scope"]):
        return False
    repo = scope.get("repository")
    if repo and not (key(repo) in {spec.repository, *spec.related_repos} or spec.cross_cutting):
        return False
    project = scope.get("project")
    if project and not (key(project) in {spec.project, *spec.related_projects}
                        or spec.cross_cutting):
        return False
    if scope.get("ticket") and (spec.ticket or "").upper() != scope["ticket"].strip().upper():
        return False
    prefix = scope.get("path_prefix")
    if prefix and not spec.path.lower().startswith(prefix.lower()):
        return False
    status = scope.get("status", "active")
    if status == "active":
        return spec.effective_status in ("active", "needs-review")
    return status == "any" or spec.effective_status == status


def world_of(notes: list[Spec], default_repository: str | None) -> World:
    docs = [make_doc(s.path, f"# {s.path}\n\n{' '.join(s.words)}\n\nMore on {s.words[0]}.",
                     memory_id=s.memory_id, status=s.status, root_scope=s.root_scope,
                     related_repos=s.related_repos, related_projects=s.related_projects,
                     superseded_by=s.superseded_by) for s in notes]
    default = (lambda: (default_repository, "test")) if default_repository else None
    world = World(docs, default_repository=default)
    assert world.refresh("full").ok
    return world


def leaks(world: World, notes: list[Spec], query: str, flt: dict) -> list[str]:
    by_id = {s.memory_id: s for s in notes}
    packet = world.service.search(query, limit=50, **flt)
    scope = packet.scope
    for name in ("repository", "project", "ticket", "root_scope", "status"):
        if flt.get(name) and name != "status":  # an explicit filter is never dropped
            assert scope.get(name), (name, scope)
    out = [f"returned {i.path} outside {scope}" for i in packet.items
           if not admitted(by_id[i.memory_id], scope)]
    explained = world.service.explain(query, limit=50, **flt)
    out += [f"ranked {c['path']} outside {scope}" for c in explained["candidates"]
            if not admitted(by_id[c["memory_id"]], scope)]
    return out


HYPOTHESIS = settings(max_examples=EXAMPLES, deadline=None, database=None,
                      suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@HYPOTHESIS
@given(notes=roots(), cases=st.lists(st.tuples(queries, filters), min_size=1, max_size=6),
       default=st.sampled_from([None, None, "api", "web"]))
def test_no_result_falls_outside_the_requested_scope(notes, cases, default):
    world = world_of(notes, default)
    for query, flt in cases:
        assert leaks(world, notes, query, flt) == []


@HYPOTHESIS
@given(notes=roots(), flt=filters)
def test_the_oracle_and_scope_filter_agree(notes, flt):
    """The oracle above is the written rule; ScopeFilter.admits must say the same."""
    world = world_of(notes, None)
    scope = ScopeFilter(status=StatusFilter.parse(flt.get("status")),
                        **{k: v for k, v in flt.items() if k != "status"})
    described = scope.describe()
    for spec in notes:
        note = world.chunks.note(spec.memory_id)
        assert scope.admits(note) == admitted(spec, described), (spec, described)
