"""Which command clients get: the installed script, or uvx for an environment in uv's cache."""

from __future__ import annotations

import json
import os
import stat
import sys
from importlib import metadata
from pathlib import Path

import pytest

from memory.entrypoints.clients import DISTRIBUTION, Interpreter, LauncherNotFound, server_command

TAG = "Signature: 8a477f597d28d172789f06886806bc55\n"  # the Cache Directory Tagging spec
WHEEL = "file:///dist/ai_memory_notes-0.1.0-py3-none-any.whl"


def environment(base: Path, *, made_by_uv: bool = True, in_cache: bool = True) -> Path:
    """A virtual environment laid out as uv (or venv) leaves it, inside a tagged cache or not."""
    cache = base / "cache"
    prefix = cache / "archive-v0" / "Zl9Jd"
    (prefix / "bin").mkdir(parents=True)
    if in_cache:
        (cache / "CACHEDIR.TAG").write_text(TAG)
    (prefix / "CACHEDIR.TAG").write_text(TAG)  # uv tags every environment it makes
    config = "home = /usr/bin\nimplementation = CPython\n"
    (prefix / "pyvenv.cfg").write_text(config + ("uv = 0.13.9\n" if made_by_uv else ""))
    for name in ("python", "ai-memory"):
        executable(prefix / "bin" / name)
    return prefix


def executable(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def distribution(base: Path, name: str, version: str, direct_url: dict | None = None):
    info = base / "site" / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    if direct_url is not None:
        (info / "direct_url.json").write_text(json.dumps(direct_url))
    return metadata.PathDistribution(info)


def interpreter(prefix: Path, **env: str) -> Interpreter:
    return Interpreter(prefix=prefix, executable=prefix / "bin" / "python", env=env,
                       windows=False, version=(3, 11))


@pytest.fixture
def uvx(tmp_path) -> Path:
    executable(tmp_path / "uv-bin" / "uv")
    return executable(tmp_path / "uv-bin" / "uvx")


def test_an_installed_environment_runs_its_own_script(tmp_path):
    prefix = environment(tmp_path, made_by_uv=False, in_cache=False)

    assert server_command(interpreter(prefix)) == (str(prefix / "bin" / "ai-memory"),)


def test_a_uv_tool_environment_is_installed_not_throw_away(tmp_path, uvx):
    prefix = environment(tmp_path, in_cache=False)  # ~/.local/share/uv/tools/<name>

    assert server_command(interpreter(prefix, UV=str(uvx.parent / "uv"))) == (
        str(prefix / "bin" / "ai-memory"),)


def test_a_uv_cache_environment_gets_an_offline_uvx_command_for_the_same_source(tmp_path, uvx):
    prefix = environment(tmp_path)
    ours = distribution(tmp_path, DISTRIBUTION, "0.1.0", {"url": WHEEL, "archive_info": {}})

    command = server_command(interpreter(prefix, UV=str(uvx.parent / "uv")), [ours])

    assert command == (str(uvx), "--offline", "--python", "3.11",
                       "--from", f"{DISTRIBUTION} @ {WHEEL}", "ai-memory")


@pytest.mark.parametrize(("direct_url", "source"), [
    (None, f"{DISTRIBUTION}==0.1.0"),
    ({"url": "https://github.com/acme/ai-memory.git",
      "vcs_info": {"vcs": "git", "commit_id": "4f2a9c1", "requested_revision": "main"}},
     f"{DISTRIBUTION} @ git+https://github.com/acme/ai-memory.git@4f2a9c1"),
    ({"url": "file:///src/ai-memory", "dir_info": {}, "subdirectory": "pkg"},
     f"{DISTRIBUTION} @ file:///src/ai-memory#subdirectory=pkg"),
])
def test_the_source_is_what_the_environment_was_built_from(tmp_path, uvx, direct_url, source):
    ours = distribution(tmp_path, DISTRIBUTION, "0.1.0", direct_url)

    command = server_command(interpreter(environment(tmp_path), UV=str(uvx.parent / "uv")), [ours])

    assert command[command.index("--from") + 1] == source


@pytest.mark.parametrize(("torch", "expected"), [
    (("2.13.0+cpu", {"url": "file:///wheels/torch-2.13.0+cpu.whl", "archive_info": {}}),
     ["--with", "torch @ file:///wheels/torch-2.13.0+cpu.whl"]),
    (("2.13.0+cpu", None), ["--torch-backend", "cpu"]),
    (("2.13.0", None), []),
])
def test_a_cpu_torch_stays_a_cpu_torch_when_uvx_rebuilds(tmp_path, uvx, torch, expected):
    packages = [distribution(tmp_path, DISTRIBUTION, "0.1.0"),
                distribution(tmp_path, "torch", *torch), distribution(tmp_path, "numpy", "2.3.1")]

    command = server_command(interpreter(environment(tmp_path), UV=str(uvx.parent / "uv")),
                             packages)

    between = list(command[command.index("--from") + 2:-1])
    assert between == expected


def test_without_uvx_beside_uv_the_command_is_uv_tool_run(tmp_path):
    uv = executable(tmp_path / "uv-bin" / "uv")
    ours = distribution(tmp_path, DISTRIBUTION, "0.1.0")

    command = server_command(interpreter(environment(tmp_path), UV=str(uv)), [ours])

    assert command[:4] == (str(uv), "tool", "run", "--offline")


def test_uvx_is_looked_up_on_path_when_uv_did_not_say_where_it_is(tmp_path, uvx):
    ours = distribution(tmp_path, DISTRIBUTION, "0.1.0")
    prefix = environment(tmp_path)

    assert server_command(interpreter(prefix, PATH=str(uvx.parent)), [ours])[0] == str(uvx)
    with pytest.raises(LauncherNotFound, match="uv tool install"):
        server_command(interpreter(prefix, PATH=str(tmp_path / "nowhere")), [ours])


def test_an_environment_without_our_script_is_a_clear_error(tmp_path):
    prefix = environment(tmp_path, made_by_uv=False, in_cache=False)
    (prefix / "bin" / "ai-memory").unlink()

    with pytest.raises(LauncherNotFound, match="install the package"):
        server_command(interpreter(prefix, PATH=str(tmp_path / "nowhere")))


def test_this_test_environment_is_an_installed_one():
    running = Interpreter.running(dict(os.environ), sys.platform)

    command = server_command(running)

    assert command == (str(Path(sys.executable).parent / "ai-memory"),)
    assert os.access(command[0], os.X_OK)
