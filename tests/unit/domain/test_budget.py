"""The character budget: a cut line fits its budget, says how much it left out, and never splits
a redaction marker or a surrogate pair."""

from hypothesis import given, strategies as st

from memory.domain.budget import CUT, bounded_data, bounded_items, cut_line, cut_point, within
from memory.domain.evidence import EvidenceItem, Signals

MARKER = "[REDACTED:aws-access-key]"


def item(text: str, start: int = 1, **kw) -> EvidenceItem:
    lines = text.count("\n")
    return EvidenceItem(memory_id="m", path="p.md", title=kw.pop("title", "T"),
                        heading=kw.pop("heading", "T"), start_line=start, end_line=start + lines,
                        text=text, score=1.0, signals=Signals(), status="active", **kw)


def test_a_line_within_the_budget_is_kept_whole():
    assert cut_line("short", 10) == "short"


def test_a_cut_line_fits_and_says_how_much_is_left_out():
    line = "A" * 1_000_000
    shown = cut_line(line, 500)
    assert len(shown) <= 500
    kept = shown.index(" [cut: ")
    assert shown.endswith(CUT.format(count=len(line) - kept))
    assert line.startswith(shown[:kept])


@given(st.integers(0, 120), st.integers(30, 200))
def test_a_cut_never_splits_a_redaction_marker(before, budget):
    line = "x" * before + MARKER + "y" * 400
    shown = cut_line(line, budget)
    head = shown.split(" [cut: ")[0]
    assert "[REDACTED:" not in head or MARKER in head
    assert len(shown) <= max(budget, len(CUT.format(count=len(line))))


def test_a_cut_never_splits_a_surrogate_pair():
    pair = "\ud83d\ude00"  # as a UTF-16 decoder that kept the halves would hand it over
    text = "ab" + pair + "cd"
    assert cut_point(text, 3) == 2
    assert cut_point(text, 4) == 4


@given(st.lists(st.text(max_size=300), min_size=1, max_size=20), st.integers(1, 2000))
def test_within_keeps_leading_lines_in_the_budget(lines, budget):
    shown, cut = within(lines, budget)
    if not cut:
        assert shown == lines[:len(shown)]
        assert len("\n".join(shown)) <= budget
    else:
        assert len(shown) == 1 and len(lines[0]) > budget


def test_items_share_the_packet_budget_and_name_their_cut_line():
    huge = item("Q" * 1_470_000, start=7)
    normal = item("one\ntwo\nthree", start=1)
    bounded = bounded_items([normal, huge], 24_000)
    assert bounded[0] == normal
    assert len(bounded[1].text) <= 12_000 and bounded[1].cut_lines == (7,)
    assert (bounded[1].start_line, bounded[1].end_line) == (7, 7)
    assert sum(len(i.text) for i in bounded) <= 24_000


def test_a_span_running_past_its_share_ends_early_without_a_cut():
    text = "\n".join(["x" * 100] * 50)  # 50 lines of 100 characters
    shown = bounded_items([item(text, start=10)], 1000)[0]
    assert shown.cut_lines == () and len(shown.text) <= 1000
    assert shown.end_line == 10 + shown.text.count("\n")
    assert shown.text == "\n".join(text.split("\n")[:shown.end_line - 9])


def test_a_title_or_heading_of_megabytes_is_cut_like_a_line():
    shown = bounded_items([item("body", title="T" * 2_000_000, heading="H" * 2_000_000)],
                          24_000)[0]
    assert len(shown.title) <= 300 and len(shown.heading) <= 300 and " [cut: " in shown.title


def test_front_matter_is_bounded_and_says_so():
    data = {"title": "ok", "blob": "B" * 1_000_000, "list": list(range(100_000)),
            "deep": {"a": {"b": {"c": "d"}}}}
    bounded, cut = bounded_data(data, 10_000)
    assert cut and len(repr(bounded)) < 12_000
    assert bounded["title"] == "ok"
    small, cut_small = bounded_data({"a": [1, 2], "b": {"c": "d"}}, 10_000)
    assert small == {"a": [1, 2], "b": {"c": "d"}} and not cut_small
