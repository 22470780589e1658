"""GitNoteHistory on a real repository: one commit of exactly the note, authored by the client."""

import subprocess

import pytest

from memory.adapters.git.note_history import GitNoteHistory
from memory.domain.errors import InvalidRequest
from memory.domain.new_note import Author
from memory.ports.note_history import HistoryError


def git(root, *args):
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                          check=True).stdout


@pytest.fixture
def repo(tmp_path, monkeypatch):
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "no-global-config"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    root = tmp_path / "memory"
    root.mkdir()
    git(root, "init", "-q")
    git(root, "config", "user.name", "Person")
    git(root, "config", "user.email", "person@example.com")
    (root / "Decisions").mkdir()
    (root / "Decisions/old.md").write_text("old\n")
    (root / "staged.md").write_text("the person's staged work\n")
    git(root, "add", "Decisions/old.md")
    git(root, "commit", "-q", "-m", "start")
    git(root, "add", "staged.md")
    return root


def test_a_write_is_one_commit_of_that_file_authored_by_the_client(repo):
    (repo / "Decisions/new[1].md").write_text("new\n")
    (repo / "Decisions/new1.md").write_text("a glob would catch me\n")
    history = GitNoteHistory.for_root(repo)
    sha = history.record(["Decisions/new[1].md"], "memory_write: New", Author.named("codex"))
    assert git(repo, "rev-parse", "HEAD").strip() == sha
    assert git(repo, "show", "--name-only", "--format=%an <%ae>|%cn|%s", sha).split("\n")[:3] \
        == ["codex <codex@ai-memory.invalid>|Person|memory_write: New", "",
            "Decisions/new[1].md"]
    status = git(repo, "status", "--porcelain")
    assert "A  staged.md" in status and "?? Decisions/new1.md" in status


def test_a_move_commits_the_old_path_gone_and_the_new_one(repo):
    (repo / "Decisions/old.md").rename(repo / "Decisions/moved.md")
    sha = GitNoteHistory.for_root(repo).record(["Decisions/old.md", "Decisions/moved.md"],
                                              "memory_edit move", Author.named("claude-code"))
    changed = git(repo, "show", "--name-status", "--format=", sha).split()
    assert changed == ["D", "Decisions/old.md", "A", "Decisions/moved.md"] or \
        changed == ["R100", "Decisions/old.md", "Decisions/moved.md"]


def test_without_a_committer_identity_ai_memory_commits(repo):
    git(repo, "config", "--unset", "user.email")
    git(repo, "config", "--unset", "user.name")
    (repo / "Decisions/x.md").write_text("x\n")
    sha = GitNoteHistory.for_root(repo).record(["Decisions/x.md"], "m", Author.named("codex"))
    assert git(repo, "show", "-s", "--format=%an|%cn", sha).strip() == "codex|ai-memory"


def test_a_root_that_is_not_a_work_tree_is_refused_clearly(tmp_path, monkeypatch):
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    with pytest.raises(InvalidRequest, match="not inside a git work tree"):
        GitNoteHistory.for_root(tmp_path)


def test_an_ignored_note_is_reported_not_committed(repo):
    (repo / ".gitignore").write_text("Private/\n")
    (repo / "Private").mkdir()
    (repo / "Private/x.md").write_text("x\n")
    before = git(repo, "rev-parse", "HEAD")
    with pytest.raises(HistoryError, match="git add failed"):
        GitNoteHistory.for_root(repo).record(["Private/x.md"], "m", Author.named("codex"))
    assert git(repo, "rev-parse", "HEAD") == before
