"""Repository keys from git remote URLs and folder names."""

import pytest

from memory.domain.workspace import remote_repository_key, repository_key


@pytest.mark.parametrize("url", [
    "git@github.com:acme/Alpha.git",
    "git@github.com:acme/alpha",
    "github.com:acme/alpha.git",
    "https://github.com/acme/alpha",
    "https://github.com/acme/alpha/",
    "https://github.com/acme/alpha.git",
    "https://user:s3cret@github.com/acme/ALPHA.git",
    "http://gitlab.example.com/group/sub/alpha.git?ref=main",
    "ssh://git@github.com/acme/alpha.git",
    "ssh://git@github.com:22/acme/alpha.git",
    "git://example.com/acme/alpha.git",
    "file:///srv/git/alpha.git",
    "/srv/git/alpha.git",
    "../alpha",
    "C:\\repos\\alpha",
    "https://dev.azure.com/org/project/_git/alpha",
    "git@ssh.dev.azure.com:v3/org/project/alpha",
    "  git@github.com:acme/alpha.git\n",
])
def test_remote_urls_name_the_repository(url):
    assert remote_repository_key(url) == "alpha"


@pytest.mark.parametrize("url", [None, "", "   ", "https://github.com", "https://github.com/",
                                 "git@github.com:", "git@github.com:.git"])
def test_urls_without_a_repository_name_nothing(url):
    assert remote_repository_key(url) is None


@pytest.mark.parametrize("name,key", [
    ("/home/me/src/Payments-API", "payments-api"),
    ("/home/me/src/alpha/", "alpha"),
    ("C:\\src\\Alpha", "alpha"),
    ("alpha.git", "alpha"),
    ("/", None),
    ("", None),
])
def test_folder_names_become_keys(name, key):
    assert repository_key(name) == key
