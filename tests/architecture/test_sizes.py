"""Functions in the application layer short enough to see whole; modules have no cap."""

from source_rules import long_functions


def test_no_application_function_is_too_long_to_read_whole():
    assert long_functions() == []
