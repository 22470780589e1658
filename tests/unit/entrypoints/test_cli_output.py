"""What the command line says: messages name its own commands, and a stage that waits (the graph
build) says what it is doing and for how long instead of sitting at `graph: 0/1`."""

import io

from memory.domain.evidence import AppliedScope, EvidenceItem, EvidencePacket, Generation, Signals
from memory.domain.refresh import RefreshReport, StageReport
from memory.entrypoints.cli import _parser
from memory.entrypoints.cli_progress import TerminalProgress
from memory.entrypoints.wording import cli_words, in_cli_words


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_core_messages_name_cli_commands():
    assert cli_words("no index yet: run memory_refresh (nothing can be found)") == \
        "no index yet: run ai-memory refresh (nothing can be found)"
    assert cli_words("run memory_refresh with mode 'full' to build it") == \
        "run ai-memory refresh --mode full to build it"
    assert cli_words("try memory_search to find its memory_id") == \
        "try ai-memory search to find its memory_id"


def test_only_messages_are_reworded_never_note_text():
    item = EvidenceItem(memory_id="m", path="p.md", title="memory_refresh", heading="h",
                        start_line=1, end_line=1, text="call memory_refresh after edits",
                        score=1.0, signals=Signals(), status="active",
                        reasons=("identifier:memory_refresh",))
    packet = EvidencePacket(query="memory_refresh", scope=AppliedScope(), generation=Generation(),
                            no_answer=False, items=(item,),
                            warnings=("stale index: run memory_refresh to index them",))
    shown = in_cli_words(packet)
    assert shown.warnings == ("stale index: run ai-memory refresh to index them",)
    assert shown.items == packet.items and shown.query == "memory_refresh"
    report = RefreshReport(mode="full", stages=(StageReport(
        stage="graph", outcome="kept-last-good", reason="run memory_refresh with mode 'full'"),))
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
