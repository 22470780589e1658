"""Run as a script: the ai-memory CLI in a process where psycopg cannot be imported, as on an
install without the postgres extra. Prints one JSON line per command, then whether any
psycopg module was loaded. Used by tests/integration/test_packaging.py."""

from __future__ import annotations

import contextlib
import io
import json
import sys


class NoPsycopg:
    """A meta-path finder that refuses psycopg and its pool, as if they were not installed."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        if name.split(".")[0] in ("psycopg", "psycopg_pool", "psycopg_binary"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


def cli(*args: str) -> dict:
    from memory.entrypoints.cli import main
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main([*args, "--json"])
    return {"args": list(args), "code": code, "out": json.loads(out.getvalue())}


def run(root: str) -> None:
    sys.meta_path.insert(0, NoPsycopg())
    for args in (("refresh", "--mode", "index", "--root", root),
                 ("search", "retry budget", "--root", root),
                 ("search", "retry budget", "--root", root,
                  "--store", "postgresql://localhost/aim")):
        print(json.dumps(cli(*args)))
    print(json.dumps({"loaded": sorted(m for m in sys.modules if m.startswith("psycopg"))}))


if __name__ == "__main__":
    run(sys.argv[1])
