"""GitSourceControl against real git repositories, and the fake held to the same contract."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from memory.adapters.git import GitSourceControl
from memory.adapters.inmemory import InMemorySourceControl

REMOTE = "git@github.com:acme/Alpha.git"


def git(folder: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(folder), *args], check=True, capture_output=True,
                   timeout=30)


@pytest.fixture
def repo(tmp_path) -> Path:
    top = tmp_path / "alpha-checkout"
    (top / "src" / "pkg").mkdir(parents=True)
    git(top, "init", "-q")
    git(top, "remote", "add", "origin", REMOTE)
    return top


@pytest.fixture(params=["git", "fake"])
def control(request, repo, tmp_path):
    if request.param == "git":
        return GitSourceControl()
    return InMemorySourceControl({str(repo): REMOTE, str(tmp_path / "bare-tree"): None})


def test_a_folder_inside_a_work_tree_names_its_top_and_origin(control, repo):
    tree = control.work_tree(str(repo / "src" / "pkg"))
    assert tree is not None
    assert Path(tree.path) == repo and tree.origin_url == REMOTE


def test_a_folder_outside_any_work_tree_is_none(control, tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    assert control.work_tree(str(plain)) is None


def test_a_work_tree_without_origin_has_no_url(control, tmp_path):
    bare = tmp_path / "bare-tree"
    bare.mkdir()
    git(bare, "init", "-q")
    tree = control.work_tree(str(bare))
    assert tree is not None and tree.origin_url is None


def test_without_a_git_binary_the_config_file_is_read(repo):
    tree = GitSourceControl(git="/nonexistent/git").work_tree(str(repo / "src"))
    assert tree is not None and tree.origin_url == REMOTE


def test_a_linked_worktree_finds_the_main_repositorys_origin(repo, tmp_path):
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty",
        "-m", "first")
    linked = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", str(linked))
    assert (linked / ".git").is_file()
    for control in (GitSourceControl(), GitSourceControl(git="/nonexistent/git")):
        tree = control.work_tree(str(linked))
        assert tree is not None and tree.origin_url == REMOTE


def test_a_missing_folder_is_none():
    assert GitSourceControl().work_tree("/no/such/folder/anywhere") is None
