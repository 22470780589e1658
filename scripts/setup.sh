#!/usr/bin/env bash
# Set up ai-memory: create .venv, install, build the index of a memory root and prove
# the server answers. Pass --root DIR (default ~/AI-Memory) and --install-clients to
# register the MCP server with the clients found (Codex, Claude Code/Desktop, Copilot,
# OpenCode, VS Code), or name them with --clients; see `ai-memory setup --help`.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/bootstrap.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
.venv/bin/ai-memory setup "$@"
root=""
prev=""
for a in "$@"; do
  case "$prev" in --root|--memory-root) root="$a";; esac
  case "$a" in --root=*|--memory-root=*) root="${a#*=}";; esac
  prev="$a"
done
root=${root:-${AI_MEMORY_ROOT:-$HOME/AI-Memory}}
case " $* " in *" --uninstall "*|*" --dry-run "*) exit 0;; esac
echo "== proving the MCP server answers (tools/list over stdio)" >&2
.venv/bin/python -m memory.entrypoints.probe --root "$root"
