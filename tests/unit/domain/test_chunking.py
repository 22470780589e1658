"""Chunking, front matter detection, path scopes and links of Markdown text (no disk)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.domain.chunking import chunk_context, chunk_lines
from memory.domain.markdown import first_heading, links, split_front_matter, split_lines
from memory.domain.note_scope import scope_from_path
from memory.domain.notes import ScopeKind


def chunks_of(text: str, **kw):
    lines = split_lines(text)
    _, body_start = split_front_matter(text)
    kw.setdefault("title", "T")
    return lines, chunk_lines(lines, memory_id="m", path="n.md", body_start=body_start, **kw)


def spans(chunks):
    return [(c.start_line, c.end_line) for c in chunks]


def test_split_lines_keeps_content_and_drops_only_the_crlf_cr():
    assert split_lines("") == []
    assert split_lines("a\nb\n") == ["a", "b"]
    assert split_lines("a\r\nb\r\n\r\nc") == ["a", "b", "", "c"]
    assert split_lines("\n") == [""]
    assert split_lines("x\ry\n") == ["x\ry"]  # a lone CR is content, as grep sees it


@pytest.mark.parametrize("text, expected", [
    ("---\ntitle: A\n---\nbody", ("title: A", 4)),
    ("---\ntitle: A\n...\nbody", ("title: A", 4)),
    ("---\r\na: 1\r\nb: 2\r\n---\r\n", ("a: 1\nb: 2", 5)),
    ("---\n---\nbody", ("", 3)),
    ("\ufeff---\na: 1\n---\n", ("a: 1", 4)),
    ("---\nnever closed\n", (None, 1)),
    ("\n---\na: 1\n---\n", (None, 1)),  # must start on line 1
    ("# Title\n---\n", (None, 1)),
    ("", (None, 1)),
])
def test_split_front_matter(text, expected):
    assert split_front_matter(text) == expected


def test_windows_overlap_and_spans_match_text_exactly():
    body = "\n".join(f"line {i}" for i in range(1, 21))
    lines, chunks = chunks_of(body)
    assert spans(chunks) == [(1, 8), (7, 14), (13, 20)]
    for c in chunks:
        assert c.text == "\n".join(lines[c.start_line - 1:c.end_line])
    assert [c.ordinal for c in chunks] == [0, 1, 2]
    assert [c.chunk_id for c in chunks] == ["m#0", "m#1", "m#2"]


def test_window_and_overlap_are_configurable_and_checked():
    body = "\n".join(f"l{i}" for i in range(1, 11))
    assert spans(chunks_of(body, window=4, overlap=1)[1]) == [(1, 4), (4, 7), (7, 10)]
    assert spans(chunks_of(body, window=5, overlap=0)[1]) == [(1, 5), (6, 10)]
    with pytest.raises(ValueError):
        chunks_of(body, window=4, overlap=4)


def test_blank_lines_are_trimmed_and_blank_windows_skipped():
    body = "\n\n\na\n" + "\n" * 12 + "b\n\n\n"
    lines, chunks = chunks_of(body)
    assert spans(chunks) == [(4, 4), (17, 17)]
    assert [c.text for c in chunks] == ["a", "b"]


def test_a_tail_window_inside_the_previous_one_is_dropped():
    body = "\n".join(["a"] * 7 + ["", ""])  # the second window trims to lines 7..7
    assert spans(chunks_of(body)[1]) == [(1, 7)]


def test_sections_split_at_headings_with_heading_paths():
    text = "\n".join([
        "# Guide", "intro",            # 1-2
        "## Setup", "install it",      # 3-4
        "### Linux", "apt install",    # 5-6
        "## Usage ##", "run it",       # 7-8
        "#hashtag is not a heading",   # 9
    ])
    _, chunks = chunks_of(text, title="Guide")
    assert [(c.heading, c.start_line, c.end_line) for c in chunks] == [
        ("Guide", 1, 2), ("Guide > Setup", 3, 4), ("Guide > Setup > Linux", 5, 6),
        ("Guide > Usage", 7, 9)]


def test_headings_inside_fenced_code_are_ignored():
    text = "\n".join([
        "# Real", "```bash", "# not a heading", "````", "```", "~~~", "## nor this", "~~~",
        "after",
    ])
    _, chunks = chunks_of(text, window=20)
    assert [(c.heading, c.start_line, c.end_line) for c in chunks] == [("Real", 1, 9)]
    assert first_heading(["```", "# Fake", "```", "# Real"]) == "Real"


def test_a_bare_parent_heading_is_carried_by_its_subsections():
    text = "# Top\n\n## Child\ntext\n## Empty sibling\n## Last\nmore"
    _, chunks = chunks_of(text)
    assert [(c.heading, c.start_line) for c in chunks] == [
        ("Top > Child", 3), ("Top > Empty sibling", 5), ("Top > Last", 6)]


def test_line_numbers_are_those_of_the_file_after_front_matter():
    text = "---\ntitle: T\ndate: 2024-01-02\n---\n\n# Head\nbody line\n"
    lines, chunks = chunks_of(text, date="2024-01-02")
    assert spans(chunks) == [(6, 7)]
    assert chunks[0].text == "# Head\nbody line"
    assert chunks[0].context == "T | Head | 2024-01-02"
    assert chunks[0].indexed_text.startswith("T | Head | 2024-01-02\n# Head")


def test_context_does_not_repeat_a_title_the_heading_path_starts_with():
    assert chunk_context("Guide", "Guide > Setup", None) == "Guide > Setup"
    assert chunk_context("Guide", "Other", "2024") == "Guide | Other | 2024"
    assert chunk_context("", "", None) == ""


def test_empty_body_cites_the_title_line_and_empty_file_has_no_chunks():
    _, chunks = chunks_of("---\ntype: memory-anchor\ntitle: Alpha repo\n---\n\n")
    assert [(c.start_line, c.text) for c in chunks] == [(3, "title: Alpha repo")]
    _, chunks = chunks_of("---\ntype: x\n---\n")
    assert [(c.start_line, c.text) for c in chunks] == [(1, "---")]
    assert chunks_of("")[1] == ()
    assert chunks_of("\n  \n\n")[1] == ()


LINE = st.sampled_from(["", "  ", "text", "more text", "# H1", "## H2", "### H3", "```",
                        "~~~", "#tag"])


@settings(max_examples=200, deadline=None, database=None)
@given(st.lists(LINE, max_size=40), st.integers(1, 10), st.integers(0, 9),
       st.integers(1, 5))
def test_every_chunk_cites_its_exact_non_blank_text(lines, window, overlap, body_start):
    overlap = min(overlap, window - 1)
    chunks = chunk_lines(lines, memory_id="m", path="p.md", title="T", window=window,
                         overlap=overlap, body_start=body_start)
    for c in chunks:
        assert c.text == "\n".join(lines[c.start_line - 1:c.end_line])
        assert lines[c.start_line - 1].strip() and lines[c.end_line - 1].strip()
    body = [c for c in chunks if c.start_line >= body_start]
    assert all(c.end_line - c.start_line < window for c in body)
    if any(line.strip() for line in lines[body_start - 1:]):
        assert body and len(body) == len(chunks)
    assert [c.ordinal for c in chunks] == list(range(len(chunks)))


@pytest.mark.parametrize("path, expected", [
    ("Repos/Alpha-API/Notes/retry.md", ("repo", "alpha-api", None, None)),
    ("repos/alpha/_repo.md", ("repo", "alpha", None, None)),
    ("Repos/alpha/Tickets/alpha-142/_ticket.md", ("ticket", "alpha", None, "ALPHA-142")),
    ("Repos/alpha/Tickets/ALPHA-7/Notes/x.md", ("ticket", "alpha", None, "ALPHA-7")),
    ("Repos/alpha/Tickets/ALPHA-9.md", ("ticket", "alpha", None, "ALPHA-9")),
    ("Projects/Apollo/_project.md", ("project", None, "apollo", None)),
    ("projects/locomo-26/sessions/session-01.md", ("project", None, "locomo-26", None)),
    ("Decisions/use-sqlite.md", ("decision", None, None, None)),
    ("tools/git.md", ("tool", None, None, None)),
    ("Workflows/release.md", ("reference", None, None, None)),
    ("References/http.md", ("reference", None, None, None)),
    ("People/ann.md", ("person", None, None, None)),
    ("Areas/health/x.md", ("area", None, None, None)),
    ("inbox.md", (None, None, None, None)),
    ("Repos/loose.md", (None, None, None, None)),
])
def test_scope_from_path(path, expected):
    scope = scope_from_path(path)
    kind = scope.kind.value if scope.kind else None
    assert (kind, scope.repository, scope.project, scope.ticket) == expected
    if scope.kind is ScopeKind.TICKET:
        assert scope.id == scope.ticket


def test_links_are_the_targets_outside_code_each_once():
    lines = [
        "See [[Retry policy]], [[Backoff|the backoff]] and [[Design#Goals]].",
        "Also [notes](../Notes/retry%20rules.md#top), [site](https://x.io/a.md),",
        "[mail](mailto:a@b.c), [img](pic.png), ![[diagram.png]], [[#local heading]]",
        "`[[in code]]` and [angle](<With Space.md>)",
        "```",
        "[[fenced]] [f](fenced.md)",
        "```",
        "[[Retry policy]] again",
    ]
    assert tuple(link.target for link in links(lines)) == (
        "Retry policy", "Backoff", "Design", "../Notes/retry rules.md", "With Space.md")
