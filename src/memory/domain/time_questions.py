"""Time as a signal: the days, months and years a question is bounded by, and the day a
note is dated."""

from __future__ import annotations

import re
from datetime import date, timedelta

from attrs import frozen

MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
          "september", "october", "november", "december")
# "may" only as the month's name, not the verb.
_MONTH = r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|(?-i:May)|june?|july?|aug(?:ust)?" \
         r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
_DAY = r"(?:[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?"
_YEAR = r"(?:19|20)\d\d"
_DATE_DMY = re.compile(rf"\b({_DAY})\s+({_MONTH})\.?,?\s*({_YEAR})?\b", re.I)
_DATE_MDY = re.compile(rf"\b({_MONTH})\.?\s+({_DAY})\b,?\s*({_YEAR})?", re.I)
_DATE_ISO = re.compile(rf"\b({_YEAR})-(\d\d)-(\d\d)\b")
_MONTH_YEAR = re.compile(rf"\b({_MONTH})\.?,?\s+({_YEAR})\b", re.I)
_YEAR_ALONE = re.compile(rf"\b(?:in|of|during|since|by)\s+({_YEAR})\b", re.I)
_ANY_YEAR = re.compile(rf"\b({_YEAR})\b")
_BETWEEN = re.compile(r"\bbetween\b|\bfrom\b.+\b(?:to|until|till)\b", re.I)


@frozen
class Period:
    """A closed range of days a question is bounded by."""

    first: date
    last: date

    def holds(self, day: date, after: int = 0) -> bool:
        """Whether a day falls in the period or up to `after` days later."""
        return self.first <= day <= self.last + timedelta(days=after)


def periods(question: str) -> tuple[Period, ...]:
    """The days, months and years a question names, as ranges of days.

    A day or month without a year takes the next year the question names ("between
    August 11 and August 15 2023"); without any, it says nothing a note date can be
    compared with and is left out. "Between A and B" is one period from A to B.
    """
    text = question or ""
    found: list[Period] = []
    taken: list[tuple[int, int]] = []

    def add(match: re.Match, period: Period | None) -> None:
        if period is not None and not any(s <= match.start() < e for s, e in taken):
            found.append(period)
            taken.append(match.span())

    for m in _DATE_ISO.finditer(text):
        add(m, _day(int(m[1]), int(m[2]), int(m[3])))
    for m in _DATE_DMY.finditer(text):
        add(m, _day(_int(m[3]) or _year_after(text, m.end()), _month(m[2]), _int(m[1])))
    for m in _DATE_MDY.finditer(text):
        add(m, _day(_int(m[3]) or _year_after(text, m.end()), _month(m[1]), _int(m[2])))
    for m in _MONTH_YEAR.finditer(text):
        add(m, _month_period(int(m[2]), _month(m[1])))
    for m in _YEAR_ALONE.finditer(text):
        add(m, Period(date(int(m[1]), 1, 1), date(int(m[1]), 12, 31)))
    if len(found) > 1 and _BETWEEN.search(text):
        return (Period(min(p.first for p in found), max(p.last for p in found)),)
    return tuple(found)


def _year_after(text: str, at: int) -> int | None:
    found = _ANY_YEAR.search(text, at)
    return int(found[1]) if found else None


def day_of(value: str | None) -> date | None:
    """The day an ISO date or date-time (front matter `date`, `created`) names."""
    if not value or len(value) < 10:
        return None
    try:
        return date.fromisoformat(value[:10])
    except ValueError:
        return None


def _int(text: str | None) -> int | None:
    digits = re.sub(r"\D", "", text or "")
    return int(digits) if digits else None


def _month(name: str) -> int:
    return next(i for i, m in enumerate(MONTHS, 1) if m.startswith(name.lower()[:3]))


def _day(year: int | None, month: int | None, day: int | None) -> Period | None:
    if year is None or month is None or day is None:
        return None
    try:
        found = date(year, month, day)
    except ValueError:
        return None
    return Period(found, found)


def _month_period(year: int, month: int) -> Period:
    following = date(year + month // 12, month % 12 + 1, 1)
    return Period(date(year, month, 1), following - timedelta(days=1))
