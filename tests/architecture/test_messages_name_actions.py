"""The core names a tool in a message only as an Action (domain/messages.py), which each edge
words its own way: a tool name written into the text would reach the command line in the
words of MCP."""

from __future__ import annotations

import ast
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
TOOL = re.compile(r"\bmemory_(search|get|neighbors|path|explain|refresh|health|feedback|write|"
                  r"edit)\b|allow_duplicate=true")
# Text that is not a message to a person: git commit messages, and the notice inside a note's
# text that a read cut short (note text is shown as it is, on every edge).
NOT_MESSAGES = {
    ("memory/application/capture/service.py", "memory_write: "),
    ("memory/application/capture/service.py", "memory_edit "),
    ("memory/application/browse/notes.py",
     " characters per read. Read the rest with memory_get(identity="),
}


def tool_names_in_text(src: Path) -> Iterator[tuple[str, int, str]]:
    """(file, line, text) of each string in domain/ and application/, docstrings aside, that
    names a tool."""
    for package in ("domain", "application"):
        for path in sorted((src / "memory" / package).rglob("*.py")):
            name = path.relative_to(src).as_posix()
            if name == "memory/domain/messages.py":
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"))
            docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                          if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                               ast.AsyncFunctionDef))
                          and node.body and isinstance(node.body[0], ast.Expr)}
            for node in ast.walk(tree):
                if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                        and id(node) not in docstrings and TOOL.search(node.value) \
                        and (name, node.value) not in NOT_MESSAGES:
                    yield name, node.lineno, node.value


def test_no_message_of_the_core_names_a_tool_in_its_text():
    assert list(tool_names_in_text(SRC)) == []


def test_the_rule_finds_a_tool_named_in_a_message(tmp_path):
    shutil.copytree(SRC / "memory" / "domain", tmp_path / "memory" / "domain")
    (tmp_path / "memory" / "application").mkdir()
    (tmp_path / "memory" / "application" / "planted.py").write_text(
        '"""memory_refresh in a docstring is fine."""\n'
        'WARNING = f"stale: run memory_refresh with mode \'full\' ({1})"\n', encoding="utf-8")
    assert [(f, line) for f, line, _ in tool_names_in_text(tmp_path)] == [
        ("memory/application/planted.py", 2)]
