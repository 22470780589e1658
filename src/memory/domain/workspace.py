"""Workspace identity: the repository key an agent's working folder stands for."""

from __future__ import annotations

import re

# scp-like git address: [user@]host:path (no scheme, no slash before the colon).
_SCP = re.compile(r"^(?:[^@/\s]+@)?[^:/\s]+:(?!//)(?P<path>.*)$")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")


def repository_key(name: str | None) -> str | None:
    """A repository key as the memory writes it: the last path segment, lower-case, no `.git`."""
    text = (name or "").strip().replace("\\", "/").rstrip("/")
    segment = text.rsplit("/", 1)[-1].strip()
    if segment.lower().endswith(".git"):
        segment = segment[:-4]
    segment = segment.strip().lower()
    return segment if segment and segment not in (".", "..") else None


def remote_repository_key(url: str | None) -> str | None:
    """The repository key a git remote URL names.

    `git@github.com:acme/Alpha.git`, `https://github.com/acme/alpha`,
    `ssh://git@host:22/acme/alpha.git`, `file:///srv/git/alpha.git` and `../alpha` all name
    `alpha`; credentials, ports, queries and trailing slashes are ignored.
    """
    text = (url or "").strip()
    if not text:
        return None
    if _SCHEME.match(text):
        path = text.split("://", 1)[1]
        path = path.split("?", 1)[0].split("#", 1)[0]
        if "/" not in path.strip("/"):
            return None  # a host and nothing else
        path = path.split("/", 1)[1]
    elif not _DRIVE.match(text) and (match := _SCP.match(text)):
        path = match.group("path")
    else:
        path = text  # a local path
    return repository_key(path)
