"""Generated memory roots and scope filters, and the written rule of what a filter admits.

Shared by the scope-isolation property tests over the in-memory service and the real stack.
"""

from __future__ import annotations

from attrs import frozen
from hypothesis import strategies as st

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

    @property
    def body(self) -> str:
        return f"# {self.path}\n\n{' '.join(self.words)}\n\nMore on {self.words[0]}."

    def markdown(self) -> str:
        """The note as a file: the same fields as front matter, the same body."""
        def listed(values) -> str:
            return "[" + ", ".join(values) + "]"
        return (f"---\nmemory_id: {self.memory_id}\nroot_scope: {self.root_scope}\n"
                f"status: {self.status}\nrelated_repos: {listed(self.related_repos)}\n"
                f"related_projects: {listed(self.related_projects)}\n"
                f"superseded_by: {listed(self.superseded_by)}\n---\n{self.body}\n")


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


FILTER_VALUES = {
    "root_scope": st.sampled_from(["work", "personal", "elsewhere"]).flatmap(case_variants),
    "repository": st.sampled_from([*REPOS, "nowhere"]).flatmap(case_variants),
    "project": st.sampled_from([*PROJECTS, "nothing"]).flatmap(case_variants),
    "ticket": st.sampled_from([*TICKETS, "GAMMA-9"]).flatmap(case_variants),
    "status": st.sampled_from([*STATUSES, "any"]),
    "path_prefix": st.sampled_from(["Repos/", "repos/api/", "Repos/web/Tickets/", "Projects/",
                                    "Decisions/", "Inbox/", "Tools", "./Repos/billing"]),
}
# Mostly one or two filters at once: with more, most searches rightly find nothing.
filters = st.lists(st.sampled_from(sorted(FILTER_VALUES)), max_size=3, unique=True).flatmap(
    lambda names: st.fixed_dictionaries({name: FILTER_VALUES[name] for name in names}))
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
