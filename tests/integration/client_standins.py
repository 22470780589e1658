"""Stand-ins for the Codex and Copilot CLIs where the real ones are not installed: small
executables written into a test's folder that answer `mcp get NAME --json` by reading the
client's own configuration file the way that client documents it, and record their argv.

They let the setup tests always run and assert what a client would make of our entries; a real
CLI (on PATH or in $AI_MEMORY_CLIENT_BIN, as scripts/check_clients.sh installs them) is used
instead wherever one is found."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

# Shared by both stand-ins: log the call, find the entry, print it as the client would.
PRELUDE = '''\
import json, os, sys
from pathlib import Path

def called(log_name):
    with open(Path(__file__).with_name(log_name), "a", encoding="utf-8") as log:
        log.write(json.dumps(sys.argv[1:]) + "\\n")
    args = sys.argv[1:]
    if len(args) != 4 or args[:2] != ["mcp", "get"] or args[3] != "--json":
        sys.exit(f"stand-in only answers `mcp get NAME --json`, not {args}")
    return args[2]

def refuse(message):
    print(f"Error: {message}", file=sys.stderr)
    sys.exit(1)
'''

# Codex: `[mcp_servers.NAME]` in $CODEX_HOME/config.toml (default ~/.codex); an entry with
# `url` is a streamable HTTP server, one with `command` a stdio server, never both.
CODEX = PRELUDE + '''
import tomllib
name = called("codex.calls")
home = Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")
try:
    config = tomllib.loads((home / "config.toml").read_text(encoding="utf-8"))
except (OSError, tomllib.TOMLDecodeError) as exc:
    refuse(f"cannot load {home / 'config.toml'}: {exc}")
entry = config.get("mcp_servers", {}).get(name)
if entry is None:
    refuse(f"No MCP server named '{name}' found.")
if ("url" in entry) == ("command" in entry):
    refuse(f"mcp_servers.{name}: give exactly one of `command` or `url`")
if "url" in entry:
    transport = {"type": "streamable_http", "url": entry["url"],
                 "bearer_token_env_var": entry.get("bearer_token_env_var")}
else:
    transport = {"type": "stdio", "command": entry["command"], "args": entry.get("args", []),
                 "env": entry.get("env")}
print(json.dumps({"name": name, "enabled": entry.get("enabled", True),
                  "transport": transport}))
'''

# Copilot: `mcpServers.NAME` in $COPILOT_HOME/mcp-config.json (default ~/.copilot); a
# `${VAR}` in a header is left for Copilot to fill in when it connects.
COPILOT = PRELUDE + '''
name = called("copilot.calls")
home = Path(os.environ.get("COPILOT_HOME") or Path.home() / ".copilot")
try:
    config = json.loads((home / "mcp-config.json").read_text(encoding="utf-8"))
except (OSError, json.JSONDecodeError) as exc:
    refuse(f"cannot load {home / 'mcp-config.json'}: {exc}")
entry = config.get("mcpServers", {}).get(name)
if entry is None:
    refuse(f"MCP server '{name}' not found")
if entry.get("type") not in ("local", "stdio", "http", "sse"):
    refuse(f"{name}: unknown server type {entry.get('type')!r}")
print(json.dumps({name: {**entry, "enabled": entry.get("enabled", True)}}))
'''

STANDINS = {"codex": CODEX, "copilot": COPILOT}


def client_cli(name: str, folder: Path, installed: str | None) -> str:
    """The client's real CLI if one is installed (in `installed`, else on PATH), else a
    stand-in for it written into `folder`."""
    real = shutil.which(name, path=installed) if installed else shutil.which(name)
    return real or str(write_standin(name, folder))


def write_standin(name: str, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / name
    script.write_text(f"#!{sys.executable}\n{STANDINS[name]}", encoding="utf-8")
    script.chmod(0o755)
    return script


def calls(folder: Path, name: str) -> list[list[str]]:
    """The argv lists a stand-in was called with, oldest first."""
    log = folder / f"{name}.calls"
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()] \
        if log.exists() else []
