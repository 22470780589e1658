#!/usr/bin/env bash
# Install ai-memory each way README's "Installing" section gives, every time into a fresh
# environment outside the checkout (pip from a built wheel and from a clean clone, pipx from
# the wheel, uv tool install from the clone, a git URL and the wheel, uvx from the wheel and
# the git URL), run `setup --install-clients --clients all` on an empty HOME, and check that
# all six clients got their entry and both skill folders their copy, that no CUDA wheel came
# in, and that the registered command answers MCP tools/list, for uv also after
# `uv cache prune`. About 13 minutes on 2 CPUs; prints one `ok` line per check.
#
#   scripts/check_install.sh                        # torch from the PyTorch CPU index
#   TORCH_WHEEL=/path/torch-X+cpu-....whl scripts/check_install.sh   # a local CPU wheel
#
# Needs python3.11 (or $PYTHON) and git; installs pipx and uv into a scratch venv. Uses a
# scratch uv cache, so nothing of yours is pruned. Commits only: it clones HEAD.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
PY=${PYTHON:-python3.11}
WORK=${WORK:-$(mktemp -d "${TMPDIR:-/tmp}/ai-memory-check.XXXXXX")}
mkdir -p "$WORK"
export UV_CACHE_DIR="$WORK/uv-cache" AI_MEMORY_MODEL_CACHE="$WORK/model-cache"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
unset CODEX_HOME CLAUDE_CONFIG_DIR AI_MEMORY_ROOT
say() { printf '== %s\n' "$*" >&2; }
logged() {  # logged NAME COMMAND...: run quietly, show the log only if it fails
  local log="$WORK/$1.log"; shift
  "$@" > "$log" 2>&1 || { grep -v "is ignored" "$log" >&2; echo "FAIL: $*" >&2; exit 1; }
}

if [ -n "${TORCH_WHEEL:-}" ]; then
  pip_torch=("$TORCH_WHEEL"); pipx_torch=(--preinstall "$TORCH_WHEEL"); uv_torch=(--with "$TORCH_WHEEL")
else
  pip_torch=(torch --index-url https://download.pytorch.org/whl/cpu)
  pipx_torch=(--pip-args=--extra-index-url=https://download.pytorch.org/whl/cpu)
  uv_torch=(--torch-backend cpu)
fi

say "work folder $WORK; tools: pipx and uv in a scratch venv"
"$PY" -m venv "$WORK/tools"
logged tools "$WORK/tools/bin/pip" install pipx uv
export PATH="$WORK/tools/bin:$PATH"
uv --version >&2; pipx --version >&2

say "clean clone of $(git -C "$REPO" rev-parse --short HEAD) and a wheel built from it"
git clone -q "$REPO" "$WORK/clone"
logged wheel "$WORK/tools/bin/pip" wheel --no-deps -w "$WORK/dist" "$WORK/clone"
WHEEL=$(ls "$WORK"/dist/ai_memory_notes-*.whl)
say "built $(basename "$WHEEL")"

cat > "$WORK/check_clients.py" <<'EOF'
"""Every client's entry launches one command that serves MCP; both skill copies exist."""
import json, os, sys, tomllib
from pathlib import Path
import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

home, root, label, expected = Path(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
config = home / ".config"
entries = {
    "codex": tomllib.loads((home / ".codex/config.toml").read_text())["mcp_servers"],
    "claude-code": json.loads((home / ".claude.json").read_text())["mcpServers"],
    "claude-desktop": json.loads((config / "Claude/claude_desktop_config.json").read_text())["mcpServers"],
    "copilot": json.loads((home / ".copilot/mcp-config.json").read_text())["mcpServers"],
    "opencode": json.loads((config / "opencode/opencode.json").read_text())["mcp"],
    "vscode": json.loads((config / "Code/User/mcp.json").read_text())["servers"],
}
launches = set()
for client, servers in entries.items():
    entry = servers["ai-memory"]
    launch = entry["command"] if client == "opencode" else [entry["command"], *entry["args"]]
    launches.add(tuple(launch))
assert len(launches) == 1, launches
(launch,) = launches
assert launch[-3:] == ("serve", "--root", root), launch
assert " ".join(launch).startswith(expected), (launch, expected)
for skill in (home / ".claude/skills/ai-memory", home / ".agents/skills/ai-memory"):
    assert (skill / "SKILL.md").is_file() and (skill / "references/note-schema.md").is_file(), skill

async def tools() -> list[str]:
    params = StdioServerParameters(command=launch[0], args=list(launch[1:]), env=dict(os.environ))
    async with stdio_client(params, errlog=open(os.devnull, "w")) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            return sorted(t.name for t in (await session.list_tools()).tools)

from memory.entrypoints.mcp_server import tool_names

names = anyio.run(tools)
assert names == sorted(tool_names()), (names, tool_names())
print(f"ok   {label}: 6 entries, 2 skill copies, tools/list {len(names)} tools (the code's list); "
      f"command: {' '.join(launch[:-3])}")
EOF

# An environment with the package and the MCP SDK in it, to run the check script.
CHECK_PY=""

check() {  # check LABEL EXPECTED SETUP_COMMAND...: setup on an empty HOME, check the clients
  local label=$1 expected=$2; shift 2
  local home="$WORK/home-$label" root="$WORK/memory-$label"
  mkdir -p "$home"
  logged "$label-setup" env HOME="$home" XDG_CONFIG_HOME="$home/.config" "$@" setup \
    --root "$root" --install-clients --clients all --skip-index
  recheck "$label" "$expected" "$label"
}

recheck() {  # recheck LABEL EXPECTED NAME: the client check again, on the HOME of LABEL
  HOME="$WORK/home-$1" XDG_CONFIG_HOME="$WORK/home-$1/.config" "$CHECK_PY" \
    "$WORK/check_clients.py" "$WORK/home-$1" "$WORK/memory-$1" "$3" "$2"
}

no_cuda() {  # no_cuda LABEL PREFIX: no nvidia-* wheel and a +cpu torch (Linux PyPI torch is CUDA)
  local site torch
  site=$(echo "$2"/lib/python3*/site-packages)
  if compgen -G "$site/nvidia*" > /dev/null; then echo "FAIL $1: nvidia wheels" >&2; exit 1; fi
  torch=$(basename "$(echo "$site"/torch-*.dist-info)" .dist-info)
  echo "ok   $1: no nvidia-* wheels; $torch"
}

say "pip, wheel: CPU torch first, then the wheel"
"$PY" -m venv "$WORK/pip-wheel"
logged pip-wheel-torch "$WORK/pip-wheel/bin/pip" install "${pip_torch[@]}"
logged pip-wheel "$WORK/pip-wheel/bin/pip" install "$WHEEL"
CHECK_PY="$WORK/pip-wheel/bin/python"
no_cuda pip-wheel "$WORK/pip-wheel"
check pip-wheel "$WORK/pip-wheel/bin/ai-memory" "$WORK/pip-wheel/bin/ai-memory"

say "pip, clean clone: CPU torch first, then the checkout folder"
"$PY" -m venv "$WORK/pip-clone"
logged pip-clone-torch "$WORK/pip-clone/bin/pip" install "${pip_torch[@]}"
logged pip-clone "$WORK/pip-clone/bin/pip" install "$WORK/clone"
no_cuda pip-clone "$WORK/pip-clone"
check pip-clone "$WORK/pip-clone/bin/ai-memory" "$WORK/pip-clone/bin/ai-memory"

say "pipx, wheel"
export PIPX_HOME="$WORK/pipx" PIPX_BIN_DIR="$WORK/pipx-bin"
logged pipx pipx install --backend pip "${pipx_torch[@]}" "$WHEEL"
no_cuda pipx "$PIPX_HOME/venvs/ai-memory-notes"
check pipx "$PIPX_HOME/venvs/ai-memory-notes/bin/ai-memory" "$PIPX_BIN_DIR/ai-memory"

say "uv tool install: clean clone, git URL, wheel"
export UV_TOOL_BIN_DIR="$WORK/uv-bin"
for kind in clone git wheel; do
  case $kind in
    clone) source_spec="$WORK/clone";;
    git) source_spec="git+file://$WORK/clone";;
    wheel) source_spec="$WHEEL";;
  esac
  export UV_TOOL_DIR="$WORK/uv-tools-$kind"
  logged "uv-$kind" uv tool install --force "${uv_torch[@]}" "$source_spec"
  no_cuda "uv-tool-$kind" "$UV_TOOL_DIR/ai-memory-notes"
  check "uv-tool-$kind" "$UV_TOOL_DIR/ai-memory-notes/bin/ai-memory" "$UV_TOOL_BIN_DIR/ai-memory"
done

say "uvx from the wheel and from the git URL: clients get an offline uvx command"
export UV_TOOL_DIR="$WORK/uv-tools-none"  # uvx would reuse an installed tool otherwise
check uvx-wheel "$WORK/tools/bin/uvx --offline" uvx -q "${uv_torch[@]}" --from "$WHEEL" ai-memory
check uvx-git "$WORK/tools/bin/uvx --offline" \
  uvx -q "${uv_torch[@]}" --from "git+file://$WORK/clone" ai-memory
say "uv cache prune deletes uvx's environments; the registered commands still serve"
logged prune uv cache prune
grep -o "Removed .*" "$WORK/prune.log" >&2 || true
recheck uvx-wheel "$WORK/tools/bin/uvx --offline" uvx-wheel-after-prune
recheck uvx-git "$WORK/tools/bin/uvx --offline" uvx-git-after-prune
recheck uv-tool-wheel "$WORK/uv-tools-wheel/ai-memory-notes/bin/ai-memory" uv-tool-wheel-after-prune

say "all install checks passed"
[ -n "${KEEP:-}" ] || rm -rf "$WORK"
