"""The one Markdown parser: front matter after a BOM, fences of any length, inline code,
links with their lines and front matter field lines (no disk)."""

from __future__ import annotations

import pytest

from memory.domain.markdown import (Link, field_line, front_matter_lines, link_target, links,
                                    marked)

NOTE = [
    "\ufeff---",                                   # 1  front matter after a BOM
    "title: Links",                                # 2
    "related:",                                    # 3
    "  - '[[Declared]]'",                          # 4
    "tags: [a, b]",                                # 5
    "---",                                         # 6
    "# Links",                                     # 7
    "See [[Real]] and `[[In Code]]` and ``a `[[Double]]` b``.",  # 8
    "```",                                         # 9
    "[[Three Fenced]]",                            # 10
    "```",                                         # 11
    "````markdown",                                # 12
    "```",                                         # 13 a three-backtick line inside four
    "[[Four Fenced]] [x](four.md)",                # 14
    "```",                                         # 15
    "````",                                        # 16
    "~~~",                                         # 17
    "[[Tilde Fenced]]",                            # 18
    "~~~",                                         # 19
    "After the fences: [[Real]] again, [md](Other%20Note.md), [[Later|shown]].",  # 20
]


def test_front_matter_after_a_bom_is_front_matter():
    yaml_text, body_start = front_matter_lines(NOTE)
    assert yaml_text.splitlines()[0] == "title: Links" and body_start == 7


def test_links_outside_fenced_and_inline_code_each_at_its_first_line():
    assert links(NOTE, 7) == (Link("Real", 8), Link("Later", 20), Link("Other Note.md", 20))


def test_a_four_backtick_fence_is_not_closed_by_three():
    code = {no for no, _, inside in marked(NOTE, 7) if inside}
    assert code == set(range(9, 20))


@pytest.mark.parametrize("key, value, expected", [
    ("title", None, 2), ("related", None, 3), ("related", "Declared", 4), ("tags", "b", 5),
    ("missing", None, None), ("Links", None, None),
])
def test_field_lines_of_front_matter(key, value, expected):
    assert field_line(NOTE, key, value) == expected


@pytest.mark.parametrize("raw, expected", [
    ("[[Deploy Checklist#Steps|the steps]]", "Deploy Checklist"), ("<With Space.md>", "With Space.md"),
    ("..\\Notes\\x.md", "../Notes/x.md"), ("https://x.io/a.md", ""), ("mailto:a@b.c", ""),
    ("#local", ""), ("Meeting: Q3", "Meeting: Q3"),
])
def test_link_targets_as_names_resolve_them(raw, expected):
    assert link_target(raw) == expected
