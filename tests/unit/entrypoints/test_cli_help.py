"""`ai-memory --help` says what the command is in whole sentences and has a command per tool."""

from memory.entrypoints.cli import _parser
from memory.entrypoints.mcp_server import tool_names


def test_the_description_is_a_whole_sentence():
    description = _parser().description
    assert description and description.rstrip().endswith(".")


def test_every_mcp_tool_has_its_command():
    commands = set(_parser()._subparsers._group_actions[0].choices)
    assert {name.removeprefix("memory_") for name in tool_names()} <= commands
