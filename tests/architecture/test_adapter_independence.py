"""Every adapter package is in the independence contract, so a new one (Postgres was missing)
cannot import another adapter unnoticed; and the contract bites between the two stores."""

import configparser

import pytest
from test_planted_violations import CONFIG, broken, lint_imports, plant, tree  # noqa: F401

from source_rules import SRC


def test_every_adapter_package_is_in_the_independence_contract():
    config = configparser.ConfigParser()
    config.read(CONFIG)
    listed = config["importlinter:contract:adapters-independent"]["modules"].split()
    packages = sorted(p.name for p in (SRC / "memory" / "adapters").iterdir()
                      if (p / "__init__.py").is_file())
    assert sorted(m.removeprefix("memory.adapters.") for m in listed) == packages


@pytest.mark.parametrize("module, statement", [
    ("memory.adapters.postgres.planted", "from memory.adapters.sqlite import rows"),
    ("memory.adapters.sqlite.planted", "import memory.adapters.postgres.seals"),
])
def test_one_store_importing_the_other_fails(tree, module, statement):  # noqa: F811
    plant(tree, module, statement)
    assert broken(lint_imports(tree)) == {"Adapter packages are independent of each other"}
