#!/usr/bin/env bash
# Installs the real CLIs of Codex, Claude Code, OpenCode and GitHub Copilot from npm and
# shows that they read what `ai-memory setup` writes, on throw-away HOMEs:
#   --shared: every entry is the stdio bridge to the root's one daemon; the CLIs that
#             connect (claude, opencode) start it, and start it again once it is killed;
#   --url:    a `serve --http --auth tokens` on loopback; the token lives only in
#             $AI_MEMORY_TOKEN (never in a file), and a wrong token is refused.
# Needs the npm registry (the only network use); everything else stays on this machine.
#
#   scripts/check_clients.sh                 # latest CLIs, work folder in /tmp, removed after
#   KEEP=1 WORK=/tmp/cc scripts/check_clients.sh
#   CODEX=@openai/codex@0.171.0 CLAUDE=... OPENCODE=... COPILOT=...   pin versions
# The folder of the installed CLIs can then run the offline tests that use them:
#   AI_MEMORY_CLIENT_BIN=/tmp/cc/npm/node_modules/.bin .venv/bin/python -m pytest \
#       tests/integration/test_setup_url.py
set -euo pipefail

REPO="$(cd "$(dirname "$0")/.." && pwd)"
AI="${AI_MEMORY:-$REPO/.venv/bin/ai-memory}"
PY="${PYTHON:-$REPO/.venv/bin/python}"
WORK="${WORK:-$(mktemp -d /tmp/check-clients.XXXXXX)}"
PORT="${PORT:-18765}"
CODEX="${CODEX:-@openai/codex}"
CLAUDE="${CLAUDE:-@anthropic-ai/claude-code}"
OPENCODE="${OPENCODE:-opencode-ai}"
COPILOT="${COPILOT:-@github/copilot}"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
export MCP_TIMEOUT=60000  # Claude Code: the first bridge also starts the daemon
unset CODEX_HOME CLAUDE_CONFIG_DIR COPILOT_HOME AI_MEMORY_ROOT AI_MEMORY_STATE_DIR || true

FAILED=0
SERVE_PID=""
ROOT="$WORK/memory"
cleanup() {
    [ -n "$SERVE_PID" ] && kill "$SERVE_PID" 2>/dev/null || true
    [ -n "$MODEL_PID" ] && kill "$MODEL_PID" 2>/dev/null || true
    [ -d "$ROOT" ] && "$AI" daemon stop --root "$ROOT" >/dev/null 2>&1 || true
    [ -n "${KEEP:-}" ] || rm -rf "$WORK"
}
trap cleanup EXIT

say() { printf '== %s\n' "$*"; }
ok() { printf 'ok   %s\n' "$*"; }
fail() { printf 'FAIL %s\n' "$*"; FAILED=1; }
# run HOME COMMAND...: the command on that HOME, echoed with its output
run() {
    local home="$1"; shift
    printf '$ %s\n' "$*"
    (cd "$home" && HOME="$home" XDG_CONFIG_HOME="$home/.config" timeout 180 "$@" 2>&1) \
        | grep -v 'could not create PATH aliases' | sed -e $'s/\x1b\\[[0-9;]*m//g' \
        | tee "$WORK/last.out" || true
}
expect() {  # expect WHAT PATTERN: the last command's output matched
    if grep -Eq "$2" "$WORK/last.out"; then ok "$1"; else fail "$1 (no /$2/ in the output)"; fi
}
# codex and copilot connect to MCP servers only in a session, and a session needs a model:
# a stand-in model endpoint on loopback refuses every request and keeps what it was sent
MODEL_PORT="${MODEL_PORT:-18798}"
MODEL_PID=""
start_model_endpoint() {
    "$PY" - "$MODEL_PORT" "$WORK/model-requests.log" <<'PY' &
import http.server, sys
class Refuse(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        with open(sys.argv[2], "ab") as log:
            log.write(body + b"\n")
        self.send_response(400)
        self.send_header("content-type", "application/json")
        self.end_headers()
        self.wfile.write(b'{"error": {"message": "stand-in model endpoint"}}')
    do_GET = do_POST
    def log_message(self, *args):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Refuse).serve_forever()
PY
    MODEL_PID=$!
}
# session HOME: one codex exec and one copilot -p turn against the stand-in model, then
# what each shows of our server (Codex: its instructions; Copilot: its tools)
session() {
    local home="$1"
    : >"$WORK/model-requests.log"
    echo "\$ codex exec --skip-git-repo-check --json -c model_provider=local ... \"say hi\"  (the stand-in model's request, grepped:)"
    run "$home" codex exec --skip-git-repo-check --json \
        -c "model_providers.local={name=\"local\",base_url=\"http://127.0.0.1:$MODEL_PORT/v1\",wire_api=\"responses\"}" \
        -c model_provider=local "say hi" </dev/null >/dev/null
    grep -o 'mcp__ai_memory: ai-memory is[^<]\{0,60\}' "$WORK/model-requests.log" | head -1 >"$WORK/last.out" || true
    cat "$WORK/last.out"
    expect "codex connected: its model request carries our server's instructions" "mcp__ai_memory: ai-memory is"
    echo "\$ COPILOT_OFFLINE=true COPILOT_PROVIDER_BASE_URL=... copilot -p \"say hi\" --allow-all-tools --log-level debug  (its log, grepped:)"
    run "$home" env COPILOT_OFFLINE=true COPILOT_PROVIDER_BASE_URL="http://127.0.0.1:$MODEL_PORT/v1" \
        COPILOT_MODEL=gpt-4o copilot -p "say hi" --allow-all-tools --log-level debug >/dev/null
    grep -oh '"ai-memory-memory_[a-z]*' -r "$home/.copilot/logs" | sort -u | tr -d '"' >"$WORK/last.out" || true
    cat "$WORK/last.out"
    expect "copilot connected: its session lists our tools" "ai-memory-memory_search"
    want=$("$PY" -c 'from memory.entrypoints.mcp_server import tool_names; print(len(tool_names()))')
    [ "$(wc -l <"$WORK/last.out")" = "$want" ] && ok "copilot: $want tools (the code's list)" \
        || fail "copilot tools: $(wc -l <"$WORK/last.out"), the code defines $want"
}
daemon_pid() { "$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["pid"])' \
    "$ROOT/.ai-memory/daemon.json" 2>/dev/null || echo none; }
daemons() { pgrep -fc -- "memory serve --root $ROOT --state-dir" || true; }

say "work folder $WORK"
mkdir -p "$WORK/npm"
npm install --prefix "$WORK/npm" --no-audit --no-fund --loglevel=error \
    node@22 "$CODEX" "$CLAUDE" "$OPENCODE" "$COPILOT" >"$WORK/npm.log" 2>&1 \
    || { cat "$WORK/npm.log"; exit 1; }
export PATH="$WORK/npm/node_modules/.bin:$PATH"
say "versions"
printf 'node %s\n' "$(node --version)"
codex --version 2>&1 | grep -v 'PATH aliases'
printf 'claude %s\n' "$(claude --version)"
printf 'opencode %s\n' "$(opencode --version)"
copilot --version | head -1
"$AI" --version

start_model_endpoint
say "a memory root with one note, indexed"
mkdir -p "$ROOT/Decisions"
printf '# Deploys\n\nEvery deploy follows the deploy checklist and has a rollback plan.\n' \
    >"$ROOT/Decisions/Deploys.md"
"$AI" refresh --mode full --root "$ROOT" >"$WORK/refresh.log" 2>&1 || { cat "$WORK/refresh.log"; exit 1; }

say "--shared: every client gets the bridge to the root's daemon"
H="$WORK/home-shared"; mkdir -p "$H"
run "$H" "$AI" setup --root "$ROOT" --shared --skip-index --clients codex,claude-code,copilot,opencode
run "$H" codex mcp list
expect "codex lists the bridge" "ai-memory +$AI +connect --root $ROOT"
run "$H" copilot mcp list
expect "copilot lists it" "ai-memory \(local\)"
run "$H" copilot mcp get ai-memory
expect "copilot reads the bridge's arguments" "Command: $AI connect --root $ROOT"
run "$H" claude mcp list
expect "claude connects through the bridge" "ai-memory: .* - ✔ Connected"
first="$(daemon_pid)"
run "$H" opencode mcp list
expect "opencode connects through the bridge" "ai-memory .*connected"
[ "$(daemons)" = 1 ] && [ "$(daemon_pid)" = "$first" ] \
    && ok "two clients, one daemon (pid $first)" || fail "daemons: $(daemons), pids $first/$(daemon_pid)"
session "$H"
[ "$(daemons)" = 1 ] && [ "$(daemon_pid)" = "$first" ] \
    && ok "four clients, one daemon (pid $first)" || fail "daemons: $(daemons), pids $first/$(daemon_pid)"
[ "$first" != none ] && kill -9 "$first"
sleep 1
run "$H" claude mcp list
expect "after kill -9 of the daemon, the next bridge starts it again" "✔ Connected"
again="$(daemon_pid)"
[ "$(daemons)" = 1 ] && [ "$again" != "$first" ] && [ "$again" != none ] \
    && ok "a new daemon (pid $again), still one" || fail "daemons after the kill: $(daemons), pid $again"
"$AI" daemon stop --root "$ROOT"

say "--url: clients that speak HTTP get the URL, the token stays in \$AI_MEMORY_TOKEN"
"$AI" token create --root "$ROOT" --name check-clients --scope read >"$WORK/token" 2>/dev/null
AI_MEMORY_TOKEN="$(tr -d '\n' <"$WORK/token")"; export AI_MEMORY_TOKEN
"$AI" serve --root "$ROOT" --http "127.0.0.1:$PORT" --auth tokens >/dev/null 2>"$WORK/serve.log" &
SERVE_PID=$!
for _ in $(seq 100); do grep -q "serving" "$WORK/serve.log" && break; sleep 0.2; done
U="http://127.0.0.1:$PORT/mcp"
H="$WORK/home-url"; mkdir -p "$H"
run "$H" "$AI" setup --url "$U" --token-env AI_MEMORY_TOKEN --clients codex,claude-code,copilot,opencode
grep -rqF "$AI_MEMORY_TOKEN" "$H" && fail "the token was written under $H" || ok "no file holds the token"
run "$H" codex mcp list
expect "codex lists the URL with its bearer variable" "ai-memory +$U +AI_MEMORY_TOKEN"
run "$H" copilot mcp get ai-memory
expect "copilot reads the http entry" "Type: http"
run "$H" claude mcp list
expect "claude connects with the token from the variable" "ai-memory: $U \(HTTP\) - ✔ Connected"
run "$H" opencode mcp list
expect "opencode connects with the token from the variable" "ai-memory .*connected"
session "$H"
grep -rqF "$AI_MEMORY_TOKEN" "$H" && fail "a client wrote the token under $H" || ok "still no file holds the token"
export AI_MEMORY_TOKEN=aim_not_a_valid_token
run "$H" claude mcp list
expect "claude with a wrong token: refused" "401"
run "$H" opencode mcp list
expect "opencode with a wrong token: refused" "failed|401"

say "the offline tests that use these CLIs, with them installed"
AI_MEMORY_CLIENT_BIN="$WORK/npm/node_modules/.bin" "$PY" -m pytest -q -rs \
    "$REPO/tests/integration/test_setup_url.py" -k "codex or copilot" 2>&1 | tail -3 \
    | tee "$WORK/last.out"
expect "the CLI tests ran, none skipped" "^2 passed"

[ "$FAILED" = 0 ] && say "all client checks passed" || say "some client checks FAILED"
exit "$FAILED"
