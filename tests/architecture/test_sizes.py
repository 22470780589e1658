"""Application modules a few hundred lines at most, functions short enough to see whole."""

from source_rules import oversized


def test_no_application_module_or_function_is_oversized():
    assert oversized() == []
