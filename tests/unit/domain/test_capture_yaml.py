"""The front matter emitter: PyYAML (what the index parses with) reads back what was written."""

import datetime as dt

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from memory.domain.errors import InvalidRequest
from memory.domain.front_matter_yaml import render_block, render_field, scalar

# Any text a title or tag may carry, lone surrogates aside (they cannot be UTF-8).
TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=60)
NAMES = st.from_regex(r"[a-z_][a-z0-9_]{0,10}", fullmatch=True)


def _load(lines):
    return yaml.safe_load("\n".join(lines[1:-1]))


@given(TEXT)
def test_any_string_reads_back_exactly(text):
    assert yaml.safe_load(f"v: {scalar(text)}") == {"v": text}


@given(st.lists(TEXT, max_size=6))
def test_any_list_reads_back_exactly(items):
    assert _load(render_block([("tags", tuple(items))])) == {"tags": items}


@given(st.dictionaries(NAMES, TEXT, min_size=1, max_size=4))
def test_a_nested_mapping_reads_back_exactly(mapping):
    assert _load(render_block([("provenance", mapping)])) == {"provenance": mapping}


@pytest.mark.parametrize("text", [
    "yes", "No", "on", "OFF", "true", "null", "~", "", "1.0", "0x1f", "1e3", "2025-01-02",
    ".inf", "- item", "a: b", "a #b", "[[Wiki]]", "{x}", "*alias", "&anchor", "!tag", "%x",
    "@x", "`x`", "'q'", '"q"', "x\u2028y", "x\x85y", "\ufeffbom", "tab\there", "line\nbreak",
    "trailing ", " leading", "#comment", "?", "a,b", "<<",
])
def test_strings_yaml_would_misread_are_quoted(text):
    assert yaml.safe_load(f"v: {scalar(text)}") == {"v": text}
    assert scalar(text).startswith('"')


def test_plain_words_stay_unquoted_for_people_reading_the_file():
    assert render_field("memory_id", "payments-api-retries") == \
        ("memory_id: payments-api-retries",)
    assert render_field("tags", ("payments", "retry keys")) == ("tags: [payments, retry keys]",)
    assert render_field("created", dt.date(2025, 3, 14)) == ("created: 2025-03-14",)


def test_a_whole_block_is_deterministic_and_reads_back():
    fields = [("memory_id", "api-x"), ("title", 'Say "hi": now'),
              ("primary_scope", {"kind": "repo", "id": "api"}),
              ("created", dt.date(2025, 1, 2)), ("related", ("[[api-y]]",))]
    block = render_block(fields)
    assert block == render_block(fields)
    assert block[0] == block[-1] == "---"
    assert _load(block) == {"memory_id": "api-x", "title": 'Say "hi": now',
                            "primary_scope": {"kind": "repo", "id": "api"},
                            "created": dt.date(2025, 1, 2), "related": ["[[api-y]]"]}


@pytest.mark.parametrize("key, value", [("Title", "x"), ("bad key", "x"), ("x", 3),
                                        ("x", None), ("x", {"k": ["nested"]}),
                                        ("x", dt.datetime(2025, 1, 1))])
def test_other_names_and_types_are_refused(key, value):
    with pytest.raises(InvalidRequest):
        render_field(key, value)


def test_a_field_given_twice_is_refused():
    with pytest.raises(InvalidRequest, match="twice"):
        render_block([("a", "x"), ("a", "y")])
