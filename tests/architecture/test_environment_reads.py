"""Configuration in one place: only entrypoints/settings.py reads the environment."""

from source_rules import ENVIRONMENT_PASSERS, environment_breaches, environment_uses


def test_only_settings_reads_the_environment():
    assert environment_breaches() == []


def test_every_module_allowed_to_pass_the_environment_on_still_does():
    # An entry nobody needs any more is a hole left open for the next read.
    passing = {module for module, _, kind in environment_uses() if kind == "pass"}
    assert set(ENVIRONMENT_PASSERS) <= passing
