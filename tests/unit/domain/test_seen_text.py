"""Text as a reader sees it: folded and with invisible characters gone, each character mapped
back to where it came from, and the views the secret rules judge."""

import pytest

from memory.domain.seen_text import Reading, SeenText

INVISIBLES = ["\u200b", "\u200c", "\u200d", "\u2060", "\u00ad", "\ufeff", "\u202e", "\u180e",
              "\u034f", "\ufe0f", "\U000e0041"]


@pytest.mark.parametrize("char", INVISIBLES)
def test_invisible_characters_are_left_out_and_the_rest_keeps_its_place(char):
    seen = SeenText.of(f"ab{char}cd")
    assert seen.text == "abcd"
    assert seen.source_span(1, 3) == (1, 4)  # "bc" covers the invisible between them


def test_compatibility_forms_fold_and_map_back_to_the_one_character_they_came_from():
    seen = SeenText.of("x ＡＫＩＡ \ufb01le")  # fullwidth letters, the fi ligature
    assert seen.text == "x AKIA file"
    assert seen.source_span(2, 6) == (2, 6)
    assert seen.source_span(7, 9) == (7, 8)  # "fi" is one character of the source


def test_emphasis_inside_a_word_is_read_through_but_not_at_its_edge():
    assert SeenText.of("pass**word**: x").read() == "password**: x"
    assert SeenText.of("_password_ and DB_PASSWORD and __init__").read() == \
        "password and DB_PASSWORD and init"
    assert SeenText.of("Authorization: ***").read() == "Authorization: ***"  # a mask


def test_views_go_from_labels_to_forms_and_skip_repeats():
    views = [(view.text, reading) for view, reading in SeenText.of("`ghp_`ab_c**d").views()]
    assert views == [("`ghp_`ab_c**d", Reading.LABELS), ("`ghp`ab_cd", Reading.LABELS),
                     ("`ghp_ab_cd", Reading.SHAPES), ("`ghpabcd", Reading.FORMS)]
    assert [reading for _, reading in SeenText.of("plain words").views()] == [Reading.LABELS]


def test_character_references_decode_and_map_back_to_the_whole_reference():
    seen = SeenText.of("gh&#112;_a&#8203;b&shy;c &amp; &nosuch;")
    assert seen.text == "ghp_abc & &nosuch;"
    assert seen.source_span(0, 4) == (0, 9)  # "ghp_": through the `&#112;` that wrote "p"
    assert seen.source_span(2, 3) == (2, 8)


def test_tags_inside_a_word_are_read_through_and_kept_between_words():
    views = [view.text for view, _ in SeenText.of("ghp_<b></b>ab<!-- x -->cd <b>bold</b>").views()]
    assert views[-2:] == ["ghp_abcd <b>bold</b>", "ghpabcd <b>bold</b>"]
