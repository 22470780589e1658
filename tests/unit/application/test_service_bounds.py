"""Every packet and every read stays within its budget; empty notes, wordless queries and names
holding lone surrogates get an answer or a clear error, never a traceback."""

import base64
import random

import pytest
from attrs import evolve
from builders import World, make_doc

from memory.domain.errors import InvalidRequest
from memory.domain.reading import MAX_READ_CHARS, MAX_READ_LINES

BLOB = base64.b64encode(random.Random(7).randbytes(1_100_000)).decode()  # ~1.47 MB, one line


@pytest.fixture(scope="module")
def world():
    w = World([
        make_doc("Runbooks/Deploy checklist.md",
                 f"# Deploy checklist\n\nDeploy checklist: tag, build, ship.\n{BLOB}\n"
                 "Roll back with the previous tag.", memory_id="deploy"),
        make_doc("Runbooks/Blob.md", f"# Blob\n\ndeploy checklist attachment: {BLOB}",
                 memory_id="blob"),
        make_doc("Runbooks/Long.md", "# Long\n\n" + "\n".join(f"step {i} of the runbook"
                                                             for i in range(5000)),
                 memory_id="long"),
        make_doc("Runbooks/Wide.md", "# Wide\n\n" + "\n".join("w" * 900 for _ in range(400)),
                 memory_id="wide"),
        evolve(make_doc("Inbox/Empty.md", "", memory_id="empty", title="Empty"), lines=()),
        make_doc("Decisions/Logging.md", "# Logging\n\nServices log JSON lines.",
                 memory_id="logging"),
    ])
    assert w.refresh("full").ok
    return w


def test_a_megabyte_line_never_makes_a_packet_bigger_than_its_budget(world):
    budget = world.engine.config.context.budget_chars
    packet = world.service.search("deploy checklist", limit=10)
    assert packet.items and not packet.no_answer
    assert sum(len(i.text) for i in packet.items) <= budget
    cut = [i for i in packet.items if i.cut_lines]
    assert cut, [i.citation for i in packet.items]
    for shown in cut:
        assert all(shown.start_line <= n <= shown.end_line for n in shown.cut_lines)
        assert " more characters]" in shown.text and BLOB not in shown.text
        kept = shown.text.split("\n")[-1].split(" [cut: ")[0]
        assert f"deploy checklist attachment: {BLOB}".startswith(kept)


def test_the_budget_holds_for_a_packet_of_many_items(world):
    packet = world.service.search("deploy checklist runbook step wide", limit=50)
    assert sum(len(i.text) for i in packet.items) <= world.engine.config.context.budget_chars


def test_a_read_of_a_megabyte_line_is_cut_and_says_so(world):
    read = world.service.get("blob")
    assert read.truncated and read.cut_lines == (3,)
    assert sum(len(line.text) for line in read.lines) <= MAX_READ_CHARS
    assert read.lines[-1].text.endswith(" more characters]")
    assert read.next_start_line is None  # nothing after the cut line


def test_a_read_stops_before_the_character_cap_and_says_where_to_go_on(world):
    read = world.service.get("wide")
    assert read.truncated and not read.cut_lines
    assert sum(len(line.text) + 1 for line in read.lines) <= MAX_READ_CHARS + 1
    assert read.next_start_line == read.end_line + 1
    numbers = [line.line for line in read.lines]
    while read.next_start_line is not None:  # following next_start_line reads every line once
        read = world.service.get("wide", start_line=read.next_start_line)
        assert sum(len(line.text) + 1 for line in read.lines) <= MAX_READ_CHARS + 1
        numbers += [line.line for line in read.lines]
    assert numbers == list(range(1, read.line_count + 1)) and not read.truncated


def test_a_read_stops_at_the_line_cap(world):
    read = world.service.get("long")
    assert len(read.lines) == MAX_READ_LINES and read.next_start_line == MAX_READ_LINES + 1
    after = world.service.get("deploy", start_line=4)
    assert after.lines[0].line == 4 and after.cut_lines == (4,)
    assert after.next_start_line == 5 and after.truncated
    assert world.service.get("deploy", start_line=5).lines[0].text.startswith("Roll back")


def test_an_empty_note_reads_as_no_lines(world):
    read = world.service.get("empty")
    assert read.lines == () and read.line_count == 0 and not read.truncated
    assert (read.start_line, read.end_line) == (1, 0)
    with pytest.raises(InvalidRequest, match="past the end"):
        world.service.get("empty", start_line=3)


@pytest.mark.parametrize("query", ['"""', "...", "?!", "—", "!!! ???", "()[]{}", "  ;  "])
def test_a_query_of_punctuation_only_has_no_answer(world, query):
    packet = world.service.search(query)
    assert packet.no_answer and packet.items == () and packet.leads == ()
    assert "no words" in packet.no_answer_reason


@pytest.mark.parametrize("query", ["C++", "v2", "日本語", "ß?"])
def test_a_query_with_any_letter_or_digit_is_searched(world, query):
    assert "no words" not in (world.service.search(query).no_answer_reason or "")


@pytest.mark.parametrize("call", [
    lambda s: s.get("caf\udce9.md"), lambda s: s.get("\ud83d"),
    lambda s: s.neighbors("logging\udcff"), lambda s: s.path("logging", "x\udc80"),
    lambda s: s.search("deploy \udce9"), lambda s: s.explain("x", "caf\udce9"),
    lambda s: s.search("deploy", repository="api\udce9"),
    lambda s: s.feedback("q", "logging", "relevant", note="n\ud800"),
])
def test_a_lone_surrogate_is_refused_before_any_store_sees_it(world, call):
    with pytest.raises(InvalidRequest, match="surrogate|not UTF-8"):
        call(world.service)


def test_a_byte_from_a_non_utf8_terminal_is_named_with_its_path_spelling(world):
    with pytest.raises(InvalidRequest, match="0xE9.*%E9"):
        world.service.get("caf\udce9.md")
