"""Client registration against real files in a temporary home, for every client and OS layout."""

from __future__ import annotations

import json
import os
import re
import stat
import tomllib
from pathlib import Path

import json5
import pytest
import yaml

from memory.entrypoints.clients import CLIENT_NAMES, install_clients, json_config, setup_paths
from memory.entrypoints.clients.jsonc_text import JsoncScanError

REPO = Path(__file__).resolve().parents[2]
SKILL_SOURCE = REPO / "src" / "memory" / "skills" / "ai-memory"
COMMAND = "/opt/ai-memory/bin/ai-memory"
PLATFORMS = ("linux", "darwin", "win32")
SKILL_CLIENTS = ("codex", "claude-code", "copilot", "opencode", "vscode")
SHARED_SKILL_CLIENTS = ("codex", "copilot", "opencode", "vscode")  # all read ~/.agents/skills
TOOLS = {"memory_search", "memory_get", "memory_neighbors", "memory_path", "memory_explain",
         "memory_refresh", "memory_health", "memory_feedback", "memory_write", "memory_edit"}


class Layout:
    """A temporary home (and APPDATA for the Windows layout) plus helpers to run the installer."""

    def __init__(self, tmp_path: Path, platform: str) -> None:
        self.platform = platform
        self.home = tmp_path / "home"
        self.home.mkdir()
        self.appdata = tmp_path / "appdata" / "Roaming"
        self.env = {"APPDATA": str(self.appdata)} if platform == "win32" else {}
        self.memory_root = tmp_path / "memory"

    def run(self, **options):
        options.setdefault("clients", list(CLIENT_NAMES))
        options.setdefault("command", COMMAND)
        return install_clients(home=self.home, platform=self.platform, env=self.env,
                               memory_root=self.memory_root, skill_dir=SKILL_SOURCE, **options)

    def app_data(self) -> Path:
        return {"linux": self.home / ".config",
                "darwin": self.home / "Library" / "Application Support",
                "win32": self.appdata}[self.platform]

    def config(self, client: str) -> Path:
        return {
            "codex": self.home / ".codex" / "config.toml",
            "claude-code": self.home / ".claude.json",
            "claude-desktop": self.app_data() / "Claude" / "claude_desktop_config.json",
            "copilot": self.home / ".copilot" / "mcp-config.json",
            "opencode": self.home / ".config" / "opencode" / "opencode.json",
            "vscode": self.app_data() / "Code" / "User" / "mcp.json",
        }[client]

    def skill(self, client: str) -> Path:
        if client == "claude-code":
            return self.home / ".claude" / "skills" / "ai-memory"
        assert client in SHARED_SKILL_CLIENTS
        return self.home / ".agents" / "skills" / "ai-memory"

    def snapshot(self) -> dict[str, bytes]:
        """Every file under the temporary home and APPDATA, with its bytes."""
        files = {}
        for base in (self.home, self.appdata):
            if base.exists():
                for path in base.rglob("*"):
                    if path.is_file():
                        files[str(path)] = path.read_bytes()
        return files

    @property
    def args(self) -> list[str]:
        return ["serve", "--root", str(self.memory_root)]


def load(path: Path):
    text = path.read_text("utf-8")
    if path.suffix == ".toml":
        return tomllib.loads(text)
    if path.suffix == ".jsonc" or path.name == "mcp.json":
        return json5.loads(text)
    return json.loads(text)


def container_of(client: str) -> str:
    return {"codex": "mcp_servers", "opencode": "mcp", "vscode": "servers"}.get(
        client, "mcpServers")


def our_entry(client: str, data: dict, name: str = "ai-memory") -> dict:
    return data[container_of(client)][name]


def launch_of(client: str, entry: dict) -> list[str]:
    return list(entry["command"]) if client == "opencode" else [entry["command"], *entry["args"]]


def assert_launches(client: str, entry: dict, layout: Layout) -> None:
    if client == "opencode":
        assert entry == {"type": "local", "command": [COMMAND, *layout.args], "enabled": True}
        return
    assert entry["command"] == COMMAND
    assert entry["args"] == layout.args
    expected_type = {"claude-code": "stdio", "vscode": "stdio", "copilot": "local"}.get(client)
    assert entry.get("type") == expected_type
    if client == "claude-code":
        assert entry["env"] == {}
    if client == "copilot":
        assert entry["tools"] == ["*"]


def backups(path: Path) -> list[Path]:
    return sorted(path.parent.glob(path.name + ".ai-memory-backup-*"))


def by_path(results) -> dict[Path, object]:
    return {result.path: result for result in results}


@pytest.fixture(params=PLATFORMS)
def layout(request, tmp_path) -> Layout:
    return Layout(tmp_path, request.param)


@pytest.fixture
def linux(tmp_path) -> Layout:
    return Layout(tmp_path, "linux")


# -- fresh install, idempotence, uninstall -------------------------------------------------

@pytest.mark.parametrize("client", CLIENT_NAMES)
def test_fresh_install_writes_a_valid_entry_launching_the_command(layout, client):
    results = layout.run(clients=[client])

    config = layout.config(client)
    assert by_path(results)[config].action == "created"
    assert_launches(client, our_entry(client, load(config)), layout)
    assert Path(our_entry(client, load(config)).get("args", layout.args)[-1]).is_absolute()
    assert backups(config) == []


def test_install_all_clients_then_second_run_changes_nothing(layout):
    first = layout.run()
    assert {r.action for r in first} == {"created"}
    assert {r.path for r in first} == (
        {layout.config(c) for c in CLIENT_NAMES} | {layout.skill(c) for c in SKILL_CLIENTS})
    before = layout.snapshot()

    second = layout.run()

    assert [r.action for r in second] == ["unchanged"] * len(first)
    assert layout.snapshot() == before


def test_uninstall_after_fresh_install_leaves_no_files(layout):
    layout.run()

    results = layout.run(uninstall=True)

    assert {r.action for r in results} == {"removed"}
    assert layout.snapshot() == {}
    assert [r.action for r in layout.run(uninstall=True)] == ["unchanged"] * len(results)


def test_windows_layout_uses_appdata(tmp_path):
    layout = Layout(tmp_path, "win32")
    layout.run(clients=["claude-desktop", "vscode"])

    assert (layout.appdata / "Claude" / "claude_desktop_config.json").is_file()
    assert (layout.appdata / "Code" / "User" / "mcp.json").is_file()
    assert not (layout.home / ".config").exists()


# -- merging into existing files ------------------------------------------------------------

EXISTING = {
    "codex": (
        "# my codex settings\n"
        'model = "gpt-5-codex"\n'
        'approval_policy = "on-request"\n'
        "\n"
        "[mcp_servers.github]\n"
        'command = "github-mcp"  # the GitHub server\n'
        'args = ["stdio"]\n'
        "\n"
        "# profiles below\n"
        "[profiles.fast]\n"
        'model = "gpt-5-mini"\n'
    ),
    "claude-code": json.dumps({
        "numStartups": 12,
        "projects": {"/src/app": {"allowedTools": [], "mcpServers": {}}},
        "mcpServers": {"github": {"type": "stdio", "command": "gh-mcp", "args": [], "env": {}}},
        "theme": "dark",
    }, indent=2),
    "claude-desktop": json.dumps({
        "mcpServers": {"filesystem": {"command": "npx", "args": ["-y", "fs-server", "/tmp"]}},
        "globalShortcut": "Ctrl+Space",
    }, indent=2) + "\n",
    "copilot": json.dumps({"mcpServers": {"playwright": {
        "type": "local", "command": "npx", "args": ["@playwright/mcp"], "tools": ["*"]}}},
        indent=4) + "\n",
    "opencode": json.dumps({"$schema": "https://opencode.ai/config.json", "theme": "opencode",
                            "mcp": {"context7": {"type": "remote",
                                                 "url": "https://mcp.context7.com/mcp"}}},
                           indent=2) + "\n",
    "vscode": '{\n\t"servers": {\n\t\t"github": {\n\t\t\t"type": "http",\n'
              '\t\t\t"url": "https://api.githubcopilot.com/mcp/"\n\t\t}\n\t},\n'
              '\t"inputs": []\n}\n',
}
OTHER_SERVER = {"codex": "github", "claude-code": "github", "claude-desktop": "filesystem",
                "copilot": "playwright", "opencode": "context7", "vscode": "github"}


@pytest.mark.parametrize("client", CLIENT_NAMES)
def test_merge_keeps_other_servers_and_settings_and_uninstall_restores_bytes(layout, client):
    config = layout.config(client)
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(EXISTING[client], encoding="utf-8")
    original = config.read_bytes()
    before = load(config)

    result = by_path(layout.run(clients=[client]))[config]

    assert result.action == "updated", result.message
    after = load(config)
    assert_launches(client, our_entry(client, after), layout)
    container = {"codex": "mcp_servers", "opencode": "mcp", "vscode": "servers"}.get(
        client, "mcpServers")
    other = OTHER_SERVER[client]
    assert after[container][other] == before[container][other]
    for key, value in before.items():
        if key != container:
            assert after[key] == value
    assert [p.read_bytes() for p in backups(config)] == [original]
    if client == "codex":
        text = config.read_text("utf-8")
        assert "# my codex settings" in text and "# the GitHub server" in text

    removed = by_path(layout.run(clients=[client], uninstall=True))[config]

    assert removed.action == "removed"
    assert config.read_bytes() == original


@pytest.mark.parametrize("original", [
    '{\n\t"servers": {},\n\t"inputs": []\n}\n',  # an empty container we did not create
    "{}",  # an existing, empty file
    '{"servers": {"github": {"type": "http", "url": "https://example.invalid/mcp"}}}',
])
def test_uninstall_restores_files_that_existed_before(linux, original):
    config = linux.config("vscode")
    config.parent.mkdir(parents=True)
    config.write_text(original, encoding="utf-8")

    linux.run(clients=["vscode"])
    assert "ai-memory" in load(config)["servers"]
    linux.run(clients=["vscode"], uninstall=True)

    assert config.read_text("utf-8") == original


@pytest.mark.parametrize("original", [
    "", "\n", 'model = "o3"', 'model = "o3"\r\n\r\n[tui]\r\nnotifications = true\r\n',
    '[mcp_servers]\n',
])
def test_codex_uninstall_restores_exact_bytes(linux, original):
    config = linux.config("codex")
    config.parent.mkdir(parents=True)
    config.write_text(original, encoding="utf-8", newline="")

    linux.run(clients=["codex"])
    assert load(config)["mcp_servers"]["ai-memory"]["command"] == COMMAND
    linux.run(clients=["codex"], uninstall=True)

    assert config.read_bytes() == original.encode("utf-8")


def test_existing_entry_is_updated_in_place_keeping_user_additions(linux, tmp_path):
    config = linux.config("claude-code")
    linux.run(clients=["claude-code"])
    data = load(config)
    data["mcpServers"]["ai-memory"]["env"] = {"AI_MEMORY_LOG": "debug"}
    config.write_text(json.dumps(data, indent=2), encoding="utf-8")

    linux.memory_root = tmp_path / "other-memory"
    result = by_path(linux.run(clients=["claude-code"]))[config]

    assert result.action == "updated"
    entry = load(config)["mcpServers"]["ai-memory"]
    assert entry["args"] == ["serve", "--root", str(tmp_path / "other-memory")]
    assert entry["env"] == {"AI_MEMORY_LOG": "debug"}
    assert len(backups(config)) == 1


def test_codex_entry_is_updated_without_losing_comments(linux, tmp_path):
    config = linux.config("codex")
    config.parent.mkdir(parents=True)
    config.write_text('[mcp_servers.ai-memory]\ncommand = "/old/ai-memory"  # pinned\n'
                      'args = ["serve"]\nstartup_timeout_sec = 30\n\n[tui]\nnotifications = true\n',
                      encoding="utf-8")

    assert by_path(linux.run(clients=["codex"]))[config].action == "updated"

    text = config.read_text("utf-8")
    data = tomllib.loads(text)
    assert data["mcp_servers"]["ai-memory"] == {
        "command": COMMAND, "args": linux.args, "startup_timeout_sec": 30}
    assert data["tui"] == {"notifications": True}
    assert "# pinned" in text


@pytest.mark.skipif(os.name != "posix", reason="file modes")
def test_file_mode_is_kept(linux):
    config = linux.config("claude-code")
    config.write_text('{"theme": "dark"}', encoding="utf-8")
    config.chmod(0o600)

    linux.run(clients=["claude-code"])

    assert stat.S_IMODE(config.stat().st_mode) == 0o600


def test_crlf_file_keeps_its_line_endings(linux):
    config = linux.config("claude-desktop")
    config.parent.mkdir(parents=True)
    original = b'{\r\n  "globalShortcut": "Ctrl+Space"\r\n}\r\n'
    config.write_bytes(original)

    linux.run(clients=["claude-desktop"])
    assert b"\n" not in config.read_bytes().replace(b"\r\n", b"")
    linux.run(clients=["claude-desktop"], uninstall=True)

    assert config.read_bytes() == original


def test_file_changed_by_the_client_meanwhile_is_not_overwritten(linux, monkeypatch):
    config = linux.config("claude-code")
    config.write_text('{"theme": "dark"}', encoding="utf-8")
    merge = json_config.JsonConfigEditor.upsert

    def client_writes_meanwhile(self, text, entry):
        merged = merge(self, text, entry)
        config.write_text('{"theme": "light"}', encoding="utf-8")
        return merged

    monkeypatch.setattr(json_config.JsonConfigEditor, "upsert", client_writes_meanwhile)
    result = by_path(linux.run(clients=["claude-code"]))[config]

    assert result.action == "error" and "run the command again" in result.message
    assert config.read_text("utf-8") == '{"theme": "light"}'
    assert backups(config) == []


# -- JSONC -------------------------------------------------------------------------------

OPENCODE_JSONC = """{
  // OpenCode settings, edited by hand
  "$schema": "https://opencode.ai/config.json",
  "theme": "tokyonight", /* a dark theme */
  "mcp": {
    // remote docs server
    "context7": {
      "type": "remote",
      "url": "https://mcp.context7.com/mcp", // no key needed
    },
  },
}
"""

VSCODE_JSONC = """// user MCP servers
{
\t"servers": {
\t\t"github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/"} // hosted
\t},
\t/* inputs prompt for secrets */
\t"inputs": [],
}
"""


def test_opencode_jsonc_is_preferred_and_comments_survive(linux):
    jsonc = linux.home / ".config" / "opencode" / "opencode.jsonc"
    jsonc.parent.mkdir(parents=True)
    jsonc.write_text(OPENCODE_JSONC, encoding="utf-8")

    result = by_path(linux.run(clients=["opencode"]))[jsonc]

    assert result.action == "updated", result.message
    assert not (jsonc.parent / "opencode.json").exists()
    text = jsonc.read_text("utf-8")
    for comment in ("// OpenCode settings, edited by hand", "/* a dark theme */",
                    "// remote docs server", "// no key needed"):
        assert comment in text
    data = json5.loads(text)
    assert data["mcp"]["context7"]["url"] == "https://mcp.context7.com/mcp"
    assert_launches("opencode", data["mcp"]["ai-memory"], linux)

    assert linux.run(clients=["opencode"])[0].action == "unchanged"
    linux.run(clients=["opencode"], uninstall=True)
    assert jsonc.read_text("utf-8") == OPENCODE_JSONC


def test_vscode_mcp_json_with_comments_and_trailing_commas(layout):
    config = layout.config("vscode")
    config.parent.mkdir(parents=True)
    config.write_text(VSCODE_JSONC, encoding="utf-8")

    assert by_path(layout.run(clients=["vscode"]))[config].action == "updated"

    text = config.read_text("utf-8")
    assert "// user MCP servers" in text and "// hosted" in text
    assert "/* inputs prompt for secrets */" in text
    data = json5.loads(text)
    assert data["servers"]["github"]["type"] == "http" and data["inputs"] == []
    assert_launches("vscode", data["servers"]["ai-memory"], layout)
    layout.run(clients=["vscode"], uninstall=True)
    assert config.read_text("utf-8") == VSCODE_JSONC


def test_commented_file_we_cannot_splice_is_left_untouched_with_the_snippet(linux, monkeypatch):
    def refuse(*_args, **_kwargs):
        raise JsoncScanError("simulated")

    monkeypatch.setattr(json_config, "_splice_upsert", refuse)
    config = linux.config("vscode")
    config.parent.mkdir(parents=True)
    config.write_text(VSCODE_JSONC, encoding="utf-8")

    result = by_path(linux.run(clients=["vscode"]))[config]

    assert result.action == "skipped"
    assert str(config) in result.message
    assert '"ai-memory": {' in result.message and COMMAND in result.message
    assert config.read_text("utf-8") == VSCODE_JSONC
    assert backups(config) == []


def test_plain_json_we_cannot_splice_is_rewritten_with_indent_2(linux, monkeypatch):
    monkeypatch.setattr(json_config, "_splice_upsert",
                        lambda *a, **k: (_ for _ in ()).throw(JsoncScanError("simulated")))
    config = linux.config("claude-desktop")
    config.parent.mkdir(parents=True)
    config.write_text('{"b": 1, "a": {"x": [1, 2]}}', encoding="utf-8")

    assert by_path(linux.run(clients=["claude-desktop"]))[config].action == "updated"

    text = config.read_text("utf-8")
    data = json.loads(text)
    assert list(data) == ["b", "a", "mcpServers"]
    assert text == json.dumps(data, indent=2) + "\n"


# -- malformed files ----------------------------------------------------------------------

MALFORMED = {
    "codex": '[mcp_servers.github\ncommand = "x"\n',
    "claude-code": '{"mcpServers": {"github": {"command": "gh"}},,}',
    "claude-desktop": "{not json at all",
    "copilot": '["a list, not an object"]',
    "opencode": '{"mcp": {"x": 1} "theme": "y"}',
    "vscode": '{\n  // comment\n  "servers": {\n}',
}


@pytest.mark.parametrize("client", CLIENT_NAMES)
def test_malformed_file_is_an_error_and_stays_untouched(linux, client):
    config = linux.config(client)
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(MALFORMED[client], encoding="utf-8")

    result = by_path(linux.run(clients=[client]))[config]

    assert result.action == "error"
    assert str(config) in result.message
    assert config.read_text("utf-8") == MALFORMED[client]
    assert backups(config) == []
    uninstall = by_path(linux.run(clients=[client], uninstall=True))[config]
    assert uninstall.action == "error"
    assert config.read_text("utf-8") == MALFORMED[client]


def test_container_of_the_wrong_type_is_an_error(linux):
    config = linux.config("copilot")
    config.parent.mkdir(parents=True)
    config.write_text('{"mcpServers": ["not", "an", "object"]}', encoding="utf-8")

    result = by_path(linux.run(clients=["copilot"]))[config]

    assert result.action == "error" and "mcpServers" in result.message


def test_one_broken_client_does_not_stop_the_others(linux):
    config = linux.config("claude-code")
    config.write_text("{oops", encoding="utf-8")

    results = linux.run()

    assert by_path(results)[config].action == "error"
    assert by_path(results)[linux.config("codex")].action == "created"


# -- dry run -----------------------------------------------------------------------------

def test_dry_run_writes_nothing_and_returns_a_diff(layout):
    config = layout.config("claude-desktop")
    config.parent.mkdir(parents=True)
    config.write_text(EXISTING["claude-desktop"], encoding="utf-8")
    before = layout.snapshot()

    results = layout.run(dry_run=True)

    assert layout.snapshot() == before
    changed = by_path(results)
    assert changed[config].action == "updated"
    assert changed[config].diff.startswith(f"--- {config}\n+++ {config}\n")
    assert '+    "ai-memory": {' in changed[config].diff
    fresh = changed[layout.config("codex")]
    assert fresh.action == "created" and fresh.diff.startswith("--- /dev/null\n")
    assert "+[mcp_servers.ai-memory]" in fresh.diff
    assert changed[layout.skill("copilot")].action == "created"
    assert "+name: ai-memory" in changed[layout.skill("copilot")].diff


def test_uninstall_dry_run_writes_nothing(linux):
    linux.run()
    before = linux.snapshot()

    results = linux.run(uninstall=True, dry_run=True)

    assert linux.snapshot() == before
    assert {r.action for r in results} == {"removed"}
    assert by_path(results)[linux.config("codex")].diff.endswith(
        'args = ["serve", "--root", "' + str(linux.memory_root) + '"]\n')


# -- skill copies ------------------------------------------------------------------------

def test_skill_copies_land_where_each_client_reads_them_and_go_on_uninstall(layout):
    layout.run()
    source = {p.relative_to(SKILL_SOURCE): p.read_bytes()
              for p in SKILL_SOURCE.rglob("*") if p.is_file()}

    for client in SKILL_CLIENTS:
        copy = layout.skill(client)
        assert {p.relative_to(copy): p.read_bytes() for p in copy.rglob("*") if p.is_file()} \
            == source
    assert not (layout.home / ".codex" / "skills").exists()
    assert not (layout.home / ".copilot" / "skills").exists()

    layout.run(uninstall=True)

    for client in SKILL_CLIENTS:
        assert not layout.skill(client).exists()


def test_stale_skill_copy_is_updated(linux):
    linux.run(clients=["copilot"])
    copy = linux.skill("copilot")
    (copy / "SKILL.md").write_text("---\nname: ai-memory\n---\nold\n", encoding="utf-8")
    (copy / "obsolete.md").write_text("gone soon", encoding="utf-8")

    result = by_path(linux.run(clients=["copilot"]))[copy]

    assert result.action == "updated"
    assert (copy / "SKILL.md").read_bytes() == (SKILL_SOURCE / "SKILL.md").read_bytes()
    assert not (copy / "obsolete.md").exists()


def test_foreign_skill_folder_is_not_removed(linux):
    copy = linux.skill("claude-code")
    copy.mkdir(parents=True)
    (copy / "SKILL.md").write_text("---\nname: someone-else\n---\n", encoding="utf-8")

    result = by_path(linux.run(clients=["claude-code"], uninstall=True))[copy]

    assert result.action == "skipped"
    assert (copy / "SKILL.md").exists()


# -- client selection --------------------------------------------------------------------

def test_unknown_client_name_lists_the_valid_ones(linux):
    with pytest.raises(ValueError) as raised:
        linux.run(clients=["codex", "emacs"])
    message = str(raised.value)
    assert "'emacs'" in message
    for name in CLIENT_NAMES:
        assert name in message


def test_platform_values_from_sys_platform_are_accepted(tmp_path):
    layout = Layout(tmp_path, "linux")
    layout.platform = "freebsd14"
    assert layout.run(clients=["vscode"])[0].path == layout.home / ".config/Code/User/mcp.json"
    layout.platform = "macos"
    with pytest.raises(ValueError, match="linux, darwin, win32"):
        layout.run(clients=["vscode"])


def test_setup_paths_reads_the_running_machine():
    paths = setup_paths(command="/usr/local/bin/ai-memory")
    assert paths.home == Path.home()
    assert paths.platform in PLATFORMS
    assert paths.command == ("/usr/local/bin/ai-memory",)
    assert paths.skill.joinpath("SKILL.md").read_bytes() == (SKILL_SOURCE / "SKILL.md").read_bytes()


def test_without_names_only_detected_clients_are_installed(linux):
    (linux.home / ".codex").mkdir()

    results = linux.run(clients=None)

    actions = {r.client: r.action for r in results}
    assert actions.pop("codex") == "created"
    assert set(actions.values()) == {"skipped"}
    assert not linux.config("vscode").exists()


# -- the skill itself --------------------------------------------------------------------

def test_skill_front_matter_names_the_skill_and_says_when_to_use_it():
    text = (SKILL_SOURCE / "SKILL.md").read_text("utf-8")
    match = re.match(r"^---\n(.*?)\n---\n", text, re.DOTALL)
    assert match, "SKILL.md must start with YAML front matter"
    meta = yaml.safe_load(match.group(1))
    assert meta["name"] == "ai-memory"
    assert isinstance(meta["description"], str) and 50 < len(meta["description"]) <= 1024
    assert (SKILL_SOURCE / "references" / "note-schema.md").is_file()
    assert (SKILL_SOURCE / "references" / "writing-notes.md").is_file()


def test_skill_files_name_only_the_ten_tools():
    # `memory_id` is the note identity field (and a memory_feedback argument), not a tool
    allowed = TOOLS | {"memory_id"}
    found = set()
    for path in SKILL_SOURCE.rglob("*.md"):
        found |= set(re.findall(r"\bmemory_[a-z_]+", path.read_text("utf-8")))
    assert found - allowed == set()
    assert TOOLS <= found


# -- one skill folder for the clients that share it --------------------------------------

def copy_of(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in folder.rglob("*") if p.is_file()}


def test_clients_sharing_agents_skills_get_one_copy_and_claude_code_its_own(linux):
    results = linux.run(clients=list(SKILL_CLIENTS))

    skill_results = {r.path: r for r in results if r.path.name == "ai-memory"}
    assert {path: r.client for path, r in skill_results.items()} == {
        linux.skill("codex"): "codex+copilot+opencode+vscode",
        linux.skill("claude-code"): "claude-code"}
    assert {r.action for r in skill_results.values()} == {"created"}
    assert copy_of(linux.skill("codex")) == copy_of(SKILL_SOURCE)
    assert copy_of(linux.skill("claude-code")) == copy_of(SKILL_SOURCE)


def test_uninstalling_one_client_keeps_the_shared_skill_for_the_others(linux):
    linux.run(clients=["codex", "copilot"])

    kept = by_path(linux.run(clients=["codex"], uninstall=True))[linux.skill("codex")]

    assert kept.action == "unchanged" and "copilot" in kept.message
    assert copy_of(linux.skill("codex")) == copy_of(SKILL_SOURCE)
    gone = by_path(linux.run(clients=["copilot"], uninstall=True))[linux.skill("copilot")]
    assert gone.action == "removed"
    assert not linux.skill("copilot").exists()


def test_a_config_we_cannot_read_keeps_the_shared_skill(linux):
    linux.run(clients=["codex", "vscode"])
    linux.config("vscode").write_text("{broken", encoding="utf-8")

    kept = by_path(linux.run(clients=["codex"], uninstall=True))[linux.skill("codex")]

    assert kept.action == "unchanged" and "vscode (config unreadable)" in kept.message
    assert linux.skill("codex").is_dir()


def test_earlier_copies_in_a_clients_own_folder_give_way_to_the_shared_one(linux):
    ours = linux.home / ".copilot" / "skills" / "ai-memory"
    ours.mkdir(parents=True)
    (ours / "SKILL.md").write_text("---\nname: ai-memory\n---\nold\n", encoding="utf-8")
    foreign = linux.home / ".config" / "opencode" / "skills" / "ai-memory"
    foreign.mkdir(parents=True)
    (foreign / "SKILL.md").write_text("---\nname: someone-else\n---\n", encoding="utf-8")

    results = by_path(linux.run(clients=["copilot", "opencode"]))

    assert results[ours].action == "removed" and not ours.exists()
    assert results[foreign].action == "skipped" and (foreign / "SKILL.md").is_file()
    assert copy_of(linux.skill("copilot")) == copy_of(SKILL_SOURCE)


# -- several memory roots ----------------------------------------------------------------

@pytest.mark.parametrize("client", CLIENT_NAMES)
def test_a_named_registration_sits_beside_the_default_one(linux, tmp_path, client):
    linux.run(clients=[client])
    default_args = linux.args
    linux.memory_root = tmp_path / "personal"

    linux.run(clients=[client], name="personal")

    servers = load(linux.config(client))[container_of(client)]
    assert launch_of(client, servers["ai-memory"])[1:] == default_args
    assert launch_of(client, servers["ai-memory-personal"]) == [COMMAND, *linux.args]
    linux.run(clients=[client], name="personal", uninstall=True)
    servers = load(linux.config(client))[container_of(client)]
    assert "ai-memory-personal" not in servers
    assert launch_of(client, servers["ai-memory"])[1:] == default_args


def test_the_skill_stays_until_the_last_registration_goes(linux):
    linux.run(clients=["claude-code"])
    linux.run(clients=["claude-code"], name="work")
    skill = linux.skill("claude-code")

    assert by_path(linux.run(clients=["claude-code"], uninstall=True))[skill].action == "unchanged"
    assert skill.is_dir()
    assert by_path(linux.run(clients=["claude-code"], name="work",
                             uninstall=True))[skill].action == "removed"
    assert not skill.exists()
    assert load(linux.config("claude-code")).get("mcpServers", {}) == {}


@pytest.mark.parametrize("bad", ["", "Work", "a b", "-x", "x" * 41, "../x", "a.b"])
def test_a_name_clients_could_mangle_is_refused_before_anything_is_written(linux, bad):
    with pytest.raises(ValueError, match="--name"):
        linux.run(name=bad)
    assert linux.snapshot() == {}


# -- launchers with leading arguments ----------------------------------------------------

@pytest.mark.parametrize("client", CLIENT_NAMES)
def test_a_launcher_with_leading_arguments_is_written_whole(linux, client):
    uvx = ["/home/me/.local/bin/uvx", "--offline", "--from", "ai-memory-notes==0.1.0",
           "ai-memory"]

    linux.run(clients=[client], command=uvx)

    assert launch_of(client, our_entry(client, load(linux.config(client)))) == [*uvx, *linux.args]


def test_copilot_home_moves_the_copilot_config(linux, tmp_path):
    linux.env = {"COPILOT_HOME": str(tmp_path / "copilot-home")}

    linux.run(clients=["copilot"])

    config = tmp_path / "copilot-home" / "mcp-config.json"
    assert launch_of("copilot", our_entry("copilot", load(config))) == [COMMAND, *linux.args]
    assert not (linux.home / ".copilot").exists()


# -- read-only registrations -------------------------------------------------------------

@pytest.mark.parametrize("client", CLIENT_NAMES)
def test_a_read_only_registration_launches_serve_read_only(linux, client):
    linux.run(clients=[client], read_only=True)

    entry = our_entry(client, load(linux.config(client)))
    assert launch_of(client, entry) == [COMMAND, *linux.args, "--read-only"]


@pytest.mark.parametrize("how", [{"shared": True}, {"url": "https://memory.example.com/mcp"}])
def test_read_only_is_refused_for_a_server_the_entry_only_forwards_to(linux, how):
    before = linux.snapshot()
    with pytest.raises(ValueError, match="--read-only"):
        linux.run(clients=["claude-code"], read_only=True, **how)
    assert linux.snapshot() == before
