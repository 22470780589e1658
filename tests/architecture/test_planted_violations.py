"""The contracts bite: each violation planted in a copy of the source tree fails its check.

lint-imports runs with the project's own .importlinter over the copy, and each plant breaks
exactly its own contract; the domain's allow-list, the environment rule and the function size
rule run over the copy too.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from source_rules import (MAX_FUNCTION_LINES, SRC, environment_breaches,
                          foreign_domain_imports, long_functions)

CONFIG = SRC.parent / ".importlinter"
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


@pytest.fixture
def tree(tmp_path):
    """A copy of src/ and of the import contracts, to plant violations in."""
    shutil.copytree(SRC / "memory", tmp_path / "src" / "memory",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(CONFIG, tmp_path / ".importlinter")
    return tmp_path


def plant(tree: Path, module: str, text: str) -> None:
    path = tree.joinpath("src", *module.split(".")).with_suffix(".py")
    path.write_text(f'"""Planted by a test."""\n\n{text}\n', encoding="utf-8")


def lint_imports(tree: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(tree / "src")}
    return subprocess.run([str(LINT_IMPORTS), "--no-cache", ".importlinter"],
                          cwd=tree, env=env, capture_output=True, text=True, timeout=120)


def broken(result: subprocess.CompletedProcess) -> set[str]:
    return {line.removesuffix(" BROKEN").strip() for line in result.stdout.splitlines()
            if line.endswith(" BROKEN")}


def test_the_unplanted_copy_keeps_every_contract(tree):
    result = lint_imports(tree)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout
    assert foreign_domain_imports(tree / "src") == []
    assert environment_breaches(tree / "src") == []
    assert long_functions(tree / "src") == []


@pytest.mark.parametrize("module, statement", [
    ("memory.adapters.sqlite.planted", "from memory.application.search.retrieval import RetrievalEngine"),
    ("memory.adapters.markdown.planted", "import memory.application.refresh.indexer"),
    ("memory.adapters.inmemory.planted", "from memory.application.search import requests"),
])
def test_an_adapter_importing_the_application_fails(tree, module, statement):
    plant(tree, module, statement)
    result = lint_imports(tree)
    assert result.returncode != 0
    assert "Adapters do not import the application" in broken(result)


@pytest.mark.parametrize("module", [
    "memory.domain.planted", "memory.ports.planted", "memory.application.planted",
    "memory.adapters.sqlite.planted", "memory.adapters.embeddings.planted",
])
def test_dependency_injector_outside_the_entrypoints_fails(tree, module):
    plant(tree, module, "from dependency_injector import providers")
    result = lint_imports(tree)
    assert result.returncode != 0
    assert "Only entrypoints know dependency_injector" in broken(result)


def test_dependency_injector_in_the_entrypoints_is_allowed(tree):
    plant(tree, "memory.entrypoints.planted", "from dependency_injector import providers")
    assert lint_imports(tree).returncode == 0


@pytest.mark.parametrize("statement, named", [
    ("import pydantic", "pydantic"),  # installed, and on no deny list
    ("import requests.adapters", "requests.adapters"),
    ("from numpy import array", "numpy"),
    ("from memory.adapters.sqlite import SqliteIndex", "memory.adapters.sqlite"),
    ("from .. import adapters", "memory"),
    ("import importlib\nimportlib.import_module('yaml')", "yaml"),
])
def test_a_domain_module_importing_anything_but_stdlib_and_attrs_fails(tree, statement, named):
    plant(tree, "memory.domain.planted", statement)
    found = foreign_domain_imports(tree / "src")
    assert found and all(f.startswith("memory.domain.planted:") for f in found)
    assert any(f.endswith(f" imports {named}") for f in found)


def test_the_domain_may_import_stdlib_attrs_and_itself(tree):
    plant(tree, "memory.domain.planted",
          "import re\nfrom collections.abc import Sequence\nimport attrs\nfrom attr import frozen\n"
          "from memory.domain.notes import Note\nfrom . import errors")
    assert foreign_domain_imports(tree / "src") == []


@pytest.mark.parametrize("statement", [
    "import os\nX = os.environ.get('AI_MEMORY_ROOT')",
    "import os\nX = os.getenv('HOME')",
    "import os\nX = os.environ['PATH']",
    "import os\nX = 'CI' in os.environ",
    "from os import environ\nX = environ.get('HOME')",
    "from os import getenv as read\nX = read('HOME')",
    "import os\nX = dict(os.environ)",  # a copy, where no child process needs one
])
def test_a_module_outside_settings_reading_the_environment_fails(tree, statement):
    plant(tree, "memory.application.planted", statement)
    assert environment_breaches(tree / "src") == [
        f"memory.application.planted:{statement.count(chr(10)) + 3} "
        f"{'passes on' if 'dict(' in statement else 'reads'} the environment"]


def test_a_module_allowed_to_pass_the_environment_on_still_may_not_read_it(tree):
    path = tree / "src" / "memory" / "adapters" / "git" / "source_control.py"
    path.write_text(path.read_text(encoding="utf-8") + "\nX = os.environ.get('GIT_DIR')\n",
                    encoding="utf-8")
    assert [b for b in environment_breaches(tree / "src") if "reads" in b] == [
        f"memory.adapters.git.source_control:{len(path.read_text().splitlines())} "
        "reads the environment"]


def test_an_application_function_too_long_to_read_whole_fails(tree):
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    plant(tree, "memory.application.search.planted", f"def long():\n{body}")
    assert long_functions(tree / "src") == [
        f"memory.application.search.planted:3 long(): {MAX_FUNCTION_LINES + 1} lines"]


# One planted violation per contract of .importlinter; a contract added without one fails
# test_every_contract_has_a_planted_violation.
PLANTS = {
    "Hexagon layers point inward": [
        ("memory.domain.planted", "from memory.application.search import retrieval"),
        # leaf modules above, so that no forbidden package comes in with them
        ("memory.ports.planted", "import memory.adapters.inmemory.tokens"),
        ("memory.application.planted", "from memory.entrypoints import wording"),
        ("memory.planted", "X = 1"),  # a module in no layer (the contract is exhaustive)
    ],
    "Adapter packages are independent of each other": [
        ("memory.adapters.sqlite.planted", "from memory.adapters.markdown import note_source"),
        ("memory.adapters.watch.planted", "import memory.adapters.statefiles"),
    ],
    "Domain, ports and application import no infrastructure": [
        ("memory.application.planted", "import sqlite3"),
        ("memory.ports.planted", "import numpy"),
        ("memory.application.planted", "import subprocess"),
    ],
    "Domain imports no installed third-party package": [
        ("memory.domain.planted", "import filelock"),
        ("memory.domain.planted", "from tomlkit import parse"),
    ],
    "Adapters do not import the application": [
        ("memory.adapters.graphify.planted", "from memory.application.refresh import indexer"),
    ],
    "Only entrypoints know dependency_injector": [
        ("memory.adapters.git.planted", "import dependency_injector"),
    ],
}


def contract_names() -> set[str]:
    import configparser
    config = configparser.ConfigParser()
    config.read(CONFIG, encoding="utf-8")
    return {config[s]["name"] for s in config.sections() if s.startswith("importlinter:contract:")}


def test_every_contract_has_a_planted_violation():
    assert set(PLANTS) == contract_names()


@pytest.mark.parametrize("contract, module, statement", [
    (contract, module, statement) for contract, plants in PLANTS.items()
    for module, statement in plants])
def test_each_contract_fails_on_its_planted_violation(tree, contract, module, statement):
    """The one planted module breaks that contract and no other: each plant shows its own
    contract biting, not a neighbour catching the import for it."""
    plant(tree, module, statement)
    result = lint_imports(tree)
    assert result.returncode != 0
    assert broken(result) == {contract}, result.stdout
