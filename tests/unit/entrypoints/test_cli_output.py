"""What the command line says: messages name its own commands, and a stage that waits (the graph
build) says what it is doing and for how long instead of sitting at `graph: 0/1`."""

import io

from memory.application.refresh.verdict import not_indexed
from memory.domain.capture_errors import DuplicateCandidate, DuplicateKnowledge
from memory.domain.evidence import AppliedScope, EvidenceItem, EvidencePacket, Generation, Signals
from memory.domain.health import refresh_advice
from memory.domain.messages import TOOL_WORDS, Action, Message
from memory.domain.refresh import RefreshReport, StageReport
from memory.entrypoints.cli import _parser
from memory.entrypoints.cli_progress import TerminalProgress
from memory.entrypoints.converter import to_json
from memory.entrypoints.mcp_server import tool_names
from memory.entrypoints.wording import COMMAND_WORDS, cli_words, error_words, in_cli_words


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_core_messages_name_mcp_tools_and_cli_commands():
    advice = not_indexed(3).warnings[0]
    assert advice == ("not indexed: this memory root has no index yet (3 notes); run "
                      "memory_refresh to build it (nothing can be found until then)")
    assert cli_words(advice) == ("not indexed: this memory root has no index yet (3 notes); "
                                 "run ai-memory refresh to build it (nothing can be found "
                                 "until then)")
    full = Message("no graph yet: ", refresh_advice(False, full=True), " to build it")
    assert full == "no graph yet: run memory_refresh with mode 'full' to build it"
    assert cli_words(full) == "no graph yet: run ai-memory refresh --mode full to build it"
    assert to_json({"warnings": (full,)}) == {"warnings": [str(full)]}  # MCP: the tool call


def test_an_error_is_worded_by_its_actions_not_by_its_text():
    duplicate = DuplicateKnowledge([DuplicateCandidate(memory_id="m", path="a.md", title="A",
                                                       reason="same title in this scope")])
    assert str(duplicate).endswith("write with allow_duplicate=true")
    assert error_words(duplicate).endswith("write with --allow-duplicate")
    # Text that only looks like a tool name (a note's, a path's) is never rewritten.
    assert error_words(ValueError("cannot read memory_refresh.md")) == \
        "cannot read memory_refresh.md"
    assert cli_words("call memory_refresh after edits") == "call memory_refresh after edits"


def test_every_action_names_a_real_tool_and_a_real_command():
    commands = all_subparsers()
    for action in Action:
        assert TOOL_WORDS[action].split()[0].split("=")[0] in (*tool_names(), "allow_duplicate")
        words = COMMAND_WORDS[action].split()
        if words[0] == "ai-memory":
            assert words[1] in commands, action
        else:
            assert words[0] in {o for a in commands["write"]._actions for o in a.option_strings}
    assert TOOL_WORDS[Action.REFRESH_FULL] == "memory_refresh with mode 'full'"


def test_only_messages_are_reworded_never_note_text():
    item = EvidenceItem(memory_id="m", path="p.md", title="memory_refresh", heading="h",
                        start_line=1, end_line=1, text="call memory_refresh after edits",
                        score=1.0, signals=Signals(), status="active",
                        reasons=("identifier:memory_refresh",))
    packet = EvidencePacket(query="memory_refresh", scope=AppliedScope(), generation=Generation(),
                            no_answer=False, items=(item,),
                            warnings=(Message("stale index: run ", Action.REFRESH,
                                              " to index them"),))
    shown = in_cli_words(packet)
    assert shown.warnings == ("stale index: run ai-memory refresh to index them",)
    assert shown.items == packet.items and shown.query == "memory_refresh"
    report = RefreshReport(mode="full", stages=(StageReport(
        stage="graph", outcome="kept-last-good",
        reason=Message("run ", Action.REFRESH_FULL)),))
    assert in_cli_words(report).stages[0].reason == "run ai-memory refresh --mode full"


def test_a_waiting_stage_says_what_it_does_and_for_how_long():
    stream, clock = io.StringIO(), Clock()
    progress = TerminalProgress(stream, quiet_line_s=5.0, clock=clock)
    with progress as update:
        update("graph", 0, 1)
        clock.now += 3
        progress.tick()  # quiet for less than 5 s: nothing new
        clock.now += 4
        progress.tick()
        clock.now += 1.5
        update("graph", 1, 1)
        progress.tick()  # done: nothing more
    assert stream.getvalue().splitlines() == [
        "graph: 0/1, building the knowledge graph (Graphify)",
        "graph: 0/1, building the knowledge graph (Graphify), 7 s",
        "graph: 1/1, done in 8.5 s",
    ]


def test_index_progress_lines_come_every_tenth():
    stream, clock = io.StringIO(), Clock()
    with TerminalProgress(stream, clock=clock) as update:
        for done in range(0, 101, 5):
            update("index", done, 100)
    lines = stream.getvalue().splitlines()
    assert lines[0] == "index: 0/100, indexing notes"
    assert lines[1:-1] == [f"index: {n}/100" for n in range(10, 100, 10)]
    assert lines[-1].startswith("index: 100/100, done in ")


def all_subparsers():
    parser = _parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    return sub.choices


def test_serve_takes_no_json_flag_and_every_flag_has_help():
    commands = all_subparsers()
    serve = {o for a in commands["serve"]._actions for o in a.option_strings}
    assert "--json" not in serve and "--root" in serve
    for name, command in commands.items():
        for action in command._actions:
            if action.help is None and name != "setup":
                raise AssertionError(f"{name} {action.option_strings or action.dest} has no help")
    assert {"--json", "--repository", "--limit"} <= {
        o for a in commands["search"]._actions for o in a.option_strings}
    assert {"--repository", "--path-prefix", "--status"} <= {
        o for a in commands["neighbors"]._actions for o in a.option_strings}
