"""The domain imports the standard library, attrs and itself: an allow-list, not a deny list."""

from source_rules import foreign_domain_imports


def test_the_domain_imports_only_the_standard_library_attrs_and_the_domain():
    assert foreign_domain_imports() == []
