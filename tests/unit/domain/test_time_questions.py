"""Periods a question is bounded by, and the day a note is dated."""

from datetime import date

import pytest

from memory.domain.time_questions import Period, day_of, periods


def days(question):
    return [(p.first.isoformat(), p.last.isoformat()) for p in periods(question)]


@pytest.mark.parametrize("question, expected", [
    ("What did they do on 25 May, 2022?", [("2022-05-25", "2022-05-25")]),
    ("What book did she finish on 8th December, 2023?", [("2023-12-08", "2023-12-08")]),
    ("Where was the picture shared on December 1,2023 taken?", [("2023-12-01", "2023-12-01")]),
    ("What changed on 2024-03-12?", [("2024-03-12", "2024-03-12")]),
    ("What was organised in June 2022?", [("2022-06-01", "2022-06-30")]),
    ("Which incidents did we have in February 2024?", [("2024-02-01", "2024-02-29")]),
    ("What did the team ship in 2024?", [("2024-01-01", "2024-12-31")]),
    ("Where was he between August 11 and August 15 2023?", [("2023-08-11", "2023-08-15")]),
    ("What happened on 31 February 2023?", [("2023-02-01", "2023-02-28")]),  # no such day
])
def test_a_question_names_its_period(question, expected):
    assert days(question) == expected


@pytest.mark.parametrize("question", [
    "When did she paint a sunrise?",  # asks when, bounded by nothing
    "What may cause the retry storm?",  # the verb, not the month
    "Which country did he visit in the second week of November?",  # no year: no day to compare
    "How do we handle 2024 errors in ALPHA-142?",  # a number, not a period
])
def test_questions_without_a_usable_period(question):
    assert periods(question) == ()


def test_a_period_holds_its_days_and_the_days_after_it_when_asked():
    june = Period(date(2022, 6, 1), date(2022, 6, 30))
    assert june.holds(date(2022, 6, 30)) and not june.holds(date(2022, 7, 1))
    assert june.holds(date(2022, 7, 1), after=1) and not june.holds(date(2022, 5, 31), after=1)


def test_the_day_a_note_is_dated():
    assert day_of("2023-05-08T13:56") == date(2023, 5, 8)
    assert day_of("2024-02-06") == date(2024, 2, 6)
    assert day_of("last spring") is None and day_of(None) is None and day_of("2024-13-01") is None
