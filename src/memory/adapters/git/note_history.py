"""GitNoteHistory: each note write becomes one commit of exactly that note; never a push.

git runs without a terminal: prompts are off, stdin is empty, its output is captured.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence

from memory.domain.errors import InvalidRequest
from memory.domain.file_names import slug
from memory.domain.new_note import Author
from memory.ports.note_history import HistoryError, NoteHistory

FALLBACK_COMMITTER = {"GIT_COMMITTER_NAME": "ai-memory",
                      "GIT_COMMITTER_EMAIL": "ai-memory@ai-memory.invalid"}


class GitNoteHistory(NoteHistory):
    def __init__(self, root: str | os.PathLike[str], *, git: str = "git",
                 timeout_s: float = 30.0):
        self._root = os.path.realpath(os.fspath(root))
        self._git_cmd = git
        self._timeout_s = timeout_s

    @classmethod
    def for_root(cls, root: str | os.PathLike[str], **options) -> GitNoteHistory:
        """A history of root; InvalidRequest when root is not inside a git work tree."""
        history = cls(root, **options)
        try:
            done = history._git("rev-parse", "--is-inside-work-tree")
        except HistoryError as e:
            raise InvalidRequest(f"cannot commit writes in {root}: {e}") from e
        if done.returncode != 0 or done.stdout.strip() != "true":
            raise InvalidRequest(f"{root} is not inside a git work tree, so writes cannot be "
                                 "committed: run `git init` there, or serve without "
                                 "--git-commit")
        return history

    def record(self, paths: Sequence[str], message: str, author: Author) -> str:
        wanted = self._committable(paths)
        if not wanted:
            raise HistoryError(f"nothing to commit for {', '.join(paths)}")
        env = self._identity()
        self._run("add", "--all", "--", *wanted, env=env)
        self._run("commit", "--only", "--quiet", "-m", message, "--author", _author(author),
                  "--", *wanted, env=env)
        return self._run("rev-parse", "HEAD").stdout.strip()

    def _committable(self, paths: Sequence[str]) -> list[str]:
        """Paths that exist, or that git tracks (a move's old path is a tracked deletion)."""
        tracked = set(self._run("ls-files", "-z", "--", *paths).stdout.split("\0"))
        return [p for p in dict.fromkeys(paths)
                if p in tracked or os.path.lexists(os.path.join(self._root, p))]

    def _identity(self) -> dict[str, str]:
        """The user's committer identity; ours where git has none, so a commit never fails
        on `Please tell me who you are`."""
        configured = self._git("config", "user.email").returncode == 0
        return {} if configured else dict(FALLBACK_COMMITTER)

    def _run(self, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        done = self._git(*args, env=env)
        if done.returncode != 0:
            reason = (done.stderr.strip() or done.stdout.strip()).splitlines()
            raise HistoryError(f"git {args[0]} failed: {reason[0] if reason else done.returncode}")
        return done

    def _git(self, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        try:
            return subprocess.run(
                [self._git_cmd, "-C", self._root, "-c", "core.quotepath=off", *args],
                stdin=subprocess.DEVNULL, capture_output=True, text=True,
                timeout=self._timeout_s, check=False,
                # Literal: a note named `a[1].md` must not match `a1.md` as a glob would.
                env={**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_LITERAL_PATHSPECS": "1",
                     **(env or {})})
        except (OSError, subprocess.SubprocessError) as e:
            raise HistoryError(f"git could not run: {e}") from e


def _author(author: Author) -> str:
    name = "".join(c for c in author.name if c not in "<>\n\r") or "unnamed-client"
    return f"{name} <{slug(name) or 'client'}@ai-memory.invalid>"
