"""The built wheel is what a user installs: it must carry the skill and find it at run time."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

from memory.entrypoints.clients import DISTRIBUTION

REPO = Path(__file__).resolve().parents[2]
SKILL = REPO / "src" / "memory" / "skills" / "ai-memory"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """A wheel built from a copy of the checkout, so the build leaves nothing in the tree."""
    tree = tmp_path_factory.mktemp("tree")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, tree / name)
    shutil.copytree(REPO / "src" / "memory", tree / "src" / "memory",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(tree), "--no-deps",
                    "--no-build-isolation", "--no-index", "-q", "-w", str(out)],
                   check=True, capture_output=True, timeout=300)
    (built,) = out.glob("*.whl")
    return built


def test_the_distribution_name_is_ours_and_the_command_stays_ai_memory():
    project = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["project"]

    assert project["name"] == DISTRIBUTION == "ai-memory-notes"
    assert project["scripts"] == {"ai-memory": "memory.entrypoints.cli:main"}


def test_the_wheel_carries_every_file_of_the_skill(wheel):
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        (metadata_name,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        meta = Parser().parsestr(archive.read(metadata_name).decode("utf-8"))

    shipped = {f"memory/skills/ai-memory/{p.relative_to(SKILL).as_posix()}"
               for p in SKILL.rglob("*") if p.is_file()}
    assert shipped and shipped <= names
    assert {"memory/skills/ai-memory/SKILL.md",
            "memory/skills/ai-memory/references/note-schema.md"} <= shipped
    assert meta["Name"] == DISTRIBUTION


def test_the_installed_package_finds_its_skill_through_importlib_resources(wheel, tmp_path):
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
    target = tmp_path / "home" / ".claude" / "skills" / "ai-memory"
    probe = (
        "import sys; from pathlib import Path\n"
        "from memory.entrypoints.clients.skill_copy import bundled_skill, install_skill\n"
        "skill = bundled_skill()\n"
        "print(Path(str(skill)).resolve())\n"
        "print(install_skill(skill, Path(sys.argv[1]), dry_run=False).action)\n")
    env = {**os.environ, "PYTHONPATH": str(site)}  # ahead of the editable checkout

    done = subprocess.run([sys.executable, "-c", probe, str(target)], env=env,
                          capture_output=True, text=True, timeout=120, check=True)

    found, action = done.stdout.split()
    assert Path(found) == (site / "memory" / "skills" / "ai-memory").resolve()
    assert action == "created"
    assert {p.relative_to(target) for p in target.rglob("*") if p.is_file()} == {
        p.relative_to(SKILL) for p in SKILL.rglob("*") if p.is_file()}


def test_psycopg_is_required_only_by_the_postgres_extra(wheel):
    with zipfile.ZipFile(wheel) as archive:
        (metadata_name,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        meta = Parser().parsestr(archive.read(metadata_name).decode("utf-8"))
    postgres = [r for r in meta.get_all("Requires-Dist") if r.startswith("psycopg")]

    assert "postgres" in meta.get_all("Provides-Extra")
    assert sorted(re.match(r"[\w\-\[\]]+", r).group() for r in postgres) == [
        "psycopg-pool", "psycopg[binary]"]
    assert all('extra == "postgres"' in r for r in postgres), postgres


def test_the_wheel_without_the_postgres_extra_never_imports_psycopg(wheel, tmp_path):
    # psycopg is blocked in the child as if it were not installed: refresh and search on
    # SQLite work, and --store postgresql:// says which extra to install.
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
    root = tmp_path / "root"
    (root / "Repos" / "beta" / "Notes").mkdir(parents=True)
    (root / "Repos" / "beta" / "Notes" / "Retry budget.md").write_text(
        "# Retry budget\n\nThe beta service retries once.\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(site), "HF_HUB_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}

    probe = REPO / "tests" / "integration" / "without_psycopg.py"
    done = subprocess.run([sys.executable, str(probe), str(root)], env=env,
                          capture_output=True, text=True, timeout=300)

    assert done.returncode == 0, done.stderr[-3000:]
    refresh, search, postgres, tool, loaded = map(json.loads, done.stdout.splitlines())
    assert refresh["code"] == 0 and refresh["out"]["stages"][0]["outcome"] == "published"
    assert search["code"] == 0
    assert [i["path"] for i in search["out"]["items"]][:1] == ["Repos/beta/Notes/Retry budget.md"]
    assert postgres["code"] == 1
    assert postgres["out"]["error"]["kind"] == "not installed"
    assert "pip install 'ai-memory-notes[postgres]'" in postgres["out"]["error"]["message"]
    assert tool["is_error"] and tool["text"].startswith("not installed: ")
    assert "pip install 'ai-memory-notes[postgres]'" in tool["text"]
    assert loaded == {"loaded": []}
